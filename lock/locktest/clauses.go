package locktest

import (
	"context"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// testBadInput: bad arguments are an error matching
// lease.ErrInvalidArgument, and nothing changes.
func testBadInput(e *env) {
	var nilCtx context.Context
	good := e.acquire(name(1), "a", e.d)
	cases := []struct {
		what string
		call func() error
	}{
		{"Acquire nil ctx", func() error { _, err := e.p.Acquire(nilCtx, name(0), "a", e.d); return err }},
		{"Acquire empty name", func() error { _, err := e.p.Acquire(e.ctx, "", "a", e.d); return err }},
		{"Acquire empty executionID", func() error { _, err := e.p.Acquire(e.ctx, name(0), "", e.d); return err }},
		{"Acquire zero d", func() error { _, err := e.p.Acquire(e.ctx, name(0), "a", 0); return err }},
		{"Acquire negative d", func() error { _, err := e.p.Acquire(e.ctx, name(0), "a", -time.Second); return err }},
		{"Renew nil ctx", func() error { _, err := e.p.Renew(nilCtx, []lock.Lease{good}, e.d); return err }},
		{"Renew zero d", func() error { _, err := e.p.Renew(e.ctx, []lock.Lease{good}, 0); return err }},
		{"Renew negative d", func() error { _, err := e.p.Renew(e.ctx, []lock.Lease{good}, -1); return err }},
		{"Renew empty name", func() error {
			bad := good
			bad.Name = ""
			_, err := e.p.Renew(e.ctx, []lock.Lease{good, bad}, e.d)
			return err
		}},
		{"Renew empty executionID", func() error {
			bad := good
			bad.ExecutionID = ""
			_, err := e.p.Renew(e.ctx, []lock.Lease{good, bad}, e.d)
			return err
		}},
		{"Release nil ctx", func() error { return e.p.Release(nilCtx, []lock.Lease{good}) }},
		{"Release empty name", func() error {
			bad := good
			bad.Name = ""
			return e.p.Release(e.ctx, []lock.Lease{good, bad})
		}},
		{"Release empty executionID", func() error {
			bad := good
			bad.ExecutionID = ""
			return e.p.Release(e.ctx, []lock.Lease{good, bad})
		}},
	}
	for _, c := range cases {
		err := c.call()
		assert.ErrorIs(e, err, lease.ErrInvalidArgument, c.what)
	}
	// Nothing changed: name(0) is free, good is held with its expiry.
	e.release(e.acquire(name(0), "b", e.d))
	e.contend(name(1), "b")
	if e.fake() {
		got := e.renew(e.d, good)
		require.Len(e, got, 1, "the lease survives bad input")
		assert.Equal(e, good.ExpiresAt, got[0].ExpiresAt, "bad Renew input must not renew (the fake clock did not move)")
	}
}

// testAcquireUnheld: an unheld lock is acquired, with a lease of d.
func testAcquireUnheld(e *env) {
	before := e.clock.Now()
	l := e.acquire(name(0), "a", e.d)
	after := e.clock.Now()
	if e.fake() {
		assert.Equal(e, before.Add(e.d), l.ExpiresAt, "ExpiresAt is now+d")
		return
	}
	assert.False(e, l.ExpiresAt.Before(before.Add(e.d).Add(-realSlack)), "ExpiresAt %v is before now+d", l.ExpiresAt)
	assert.False(e, l.ExpiresAt.After(after.Add(e.d).Add(realSlack)), "ExpiresAt %v is after now+d", l.ExpiresAt)
}

// testContention: a held lock is contended for everyone, its holder
// included (locks are not reentrant), and other names are unaffected.
func testContention(e *env) {
	l := e.acquire(name(0), "a", e.d)
	e.contend(name(0), "b")
	e.contend(name(0), "a")
	e.acquire(name(1), "a", e.d) // tokens are per name: nothing is asked of them across names
	got := e.renew(e.d, l)
	require.Len(e, got, 1, "contention must not disturb the holder")
}

// testContextCancelled: an Acquire with a cancelled context fails and
// acquires nothing.
func testContextCancelled(e *env) {
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	l, err := e.p.Acquire(ctx, name(0), "a", e.d)
	assert.Error(e, err, "Acquire with a cancelled context")
	assert.Nil(e, l)
	e.acquire(name(0), "b", e.d)
}

// testTakeOverAfterExpiry: an expired lock is acquired by another
// execution, or by the same one, each time with a greater token; with a
// fake clock, exactly at ExpiresAt and not a nanosecond before.
func testTakeOverAfterExpiry(e *env) {
	a := e.acquire(name(0), "a", e.short())
	e.contend(name(0), "b")
	if e.fake() {
		e.advance(a.ExpiresAt.Sub(e.clock.Now()) - 1)
		e.contend(name(0), "b")
	}
	e.expire(a)
	b := e.acquire(name(0), "b", e.short())
	assert.Greater(e, b.Token, a.Token, "take-over token")
	assert.Empty(e, e.renew(e.d, a), "the expired lease must not be renewed after take-over")
	e.expire(b)
	b2 := e.acquire(name(0), "b", e.d)
	assert.Greater(e, b2.Token, b.Token, "re-acquisition by the same execution")
}

// testRenewExtends: Renew extends to now+d and keeps name, executionID and
// token.
func testRenewExtends(e *env) {
	l := e.acquire(name(0), "a", e.short())
	if e.fake() {
		e.advance(e.short() / 2)
	}
	before := e.clock.Now()
	got := e.renew(e.d, l)
	require.Len(e, got, 1)
	assert.True(e, sameHolding(l, got[0]), "Renew must keep the holding: %+v -> %+v", l, got[0])
	if e.fake() {
		assert.Equal(e, before.Add(e.d), got[0].ExpiresAt, "ExpiresAt is now+d")
	} else {
		assert.False(e, got[0].ExpiresAt.Before(before.Add(e.d).Add(-realSlack)), "ExpiresAt %v is before now+d", got[0].ExpiresAt)
	}
	e.expire(l) // the original expiry passes; the renewed lease holds
	e.contend(name(0), "b")
	again := e.renew(e.d, got[0])
	require.Len(e, again, 1, "a renewed lease renews again")
	assert.Equal(e, l.Token, again[0].Token)
}

// testRenewSkipsExpired: an expired lease is not renewed, even if nobody
// took the lock over, and the lock stays free.
func testRenewSkipsExpired(e *env) {
	l := e.acquire(name(0), "a", e.short())
	e.expire(l)
	assert.Empty(e, e.renew(e.d, l), "an expired lease must not be renewed")
	e.acquire(name(0), "b", e.d)
}

// testRenewPartial: Renew returns exactly the leases still held, in input
// order, and skips the rest silently.
func testRenewPartial(e *env) {
	short := e.acquire(name(9), "a", e.short())
	e.expire(short)
	a := e.acquire(name(0), "a", e.d)
	b := e.acquire(name(1), "a", e.d)
	c := e.acquire(name(2), "b", e.d)
	e.release(b)
	wrongToken, wrongExec := a, a
	wrongToken.Token++
	wrongExec.ExecutionID = "b"
	unknown := lock.Lease{Name: name(3), ExecutionID: "a", Token: a.Token}
	got := e.renew(e.d, c, unknown, b, wrongToken, short, wrongExec, a)
	require.Len(e, got, 2, "only c and a are held: %+v", got)
	assert.True(e, sameHolding(c, got[0]), "first renewed is c")
	assert.True(e, sameHolding(a, got[1]), "second renewed is a")
	assert.Empty(e, e.renew(e.d), "renewing nothing")
	e.contend(name(0), "b") // the wrong-exec entry did not disturb a
	e.acquire(name(9), "b", e.d)
}

// testReleaseFrees: a released lock is free at once, with no delay.
func testReleaseFrees(e *env) {
	a := e.acquire(name(0), "a", e.d)
	e.release(a)
	b := e.acquire(name(0), "b", e.d)
	assert.Greater(e, b.Token, a.Token)
	assert.Empty(e, e.renew(e.d, a), "a released lease must not be renewed")
}

// testReleaseIdempotent: releasing a released, expired, unknown or empty
// list of leases is not an error and changes nothing.
func testReleaseIdempotent(e *env) {
	a := e.acquire(name(0), "a", e.d)
	e.release(a)
	e.release(a)
	e.release()
	e.release(lock.Lease{Name: name(1), ExecutionID: "a", Token: 1})
	x := e.acquire(name(2), "a", e.short())
	e.expire(x)
	e.release(x, x)
	held := e.acquire(name(3), "b", e.d)
	e.release(a, x, held, held)
	e.acquire(name(3), "c", e.d)
}

// testStaleRelease: a holder whose lease expired and was taken over cannot
// release (or renew) the new holder's lock.
func testStaleRelease(e *env) {
	a := e.acquire(name(0), "a", e.short())
	e.expire(a)
	b := e.acquire(name(0), "b", e.d)
	e.release(a)
	e.contend(name(0), "c")
	got := e.renew(e.d, a, b)
	require.Len(e, got, 1, "only the new holder renews")
	assert.True(e, sameHolding(b, got[0]))
}

// testStaleReleaseSameExecution: the token tells two holdings of the same
// execution apart: releasing the old one leaves the new one held.
func testStaleReleaseSameExecution(e *env) {
	old := e.acquire(name(0), "a", e.short())
	e.expire(old)
	cur := e.acquire(name(0), "a", e.d)
	require.Greater(e, cur.Token, old.Token)
	e.release(old)
	e.contend(name(0), "b")
	got := e.renew(e.d, old, cur)
	require.Len(e, got, 1)
	assert.Equal(e, cur.Token, got[0].Token)
}

// testTokensIncrease: tokens of a name strictly increase over 10,000
// acquisitions (fewer on a real clock) ended by release, expiry and
// take-over, interleaved over three names.
func testTokensIncrease(e *env) {
	n := e.scale(10000, 150)
	last := map[string]uint64{}
	for i := range n {
		nm := name(i % 3)
		l := e.acquire(nm, name(i%5), e.short())
		if l.Token <= last[nm] {
			e.Fatalf("acquisition %d of %s: token %d after %d", i, nm, l.Token, last[nm])
		}
		last[nm] = l.Token
		switch {
		case e.fake() && i%4 == 3:
			e.expire(l)
		case !e.fake() && i%50 == 49:
			e.expire(l)
		default:
			e.release(l)
		}
	}
}
