package locktest

import (
	"context"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// handOffLimit bounds, in real time, how long a clause waits for a waiter
// that should have the lock: on a fake clock the hand-off is immediate; on a
// real one it follows the holder's expiry, which a remote provider may
// notice late (etcd's lessor scans every 500 ms).
const handOffLimit = 10 * time.Second

// waitResult is what an AcquireWait returned.
type waitResult struct {
	l   *lock.Lease
	err error
}

// wait starts AcquireWait(ctx, name, exec, e.d) on a goroutine and
// returns the channel its result arrives on. The call is cancelled and
// waited for when the clause ends, so a failing clause leaks nothing.
func (e *env) wait(ctx context.Context, w lockprovider.Waiter, name, exec string) <-chan waitResult {
	e.Helper()
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan waitResult, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		l, err := w.AcquireWait(ctx, name, exec, e.d)
		out <- waitResult{l, err}
	}()
	e.Cleanup(func() {
		cancel()
		<-done
	})
	return out
}

// handedOff returns the lease a waiter got, failing the clause if it
// returned anything else or nothing within handOffLimit.
func (e *env) handedOff(ch <-chan waitResult, name, exec string) lock.Lease {
	e.Helper()
	select {
	case r := <-ch:
		require.NoError(e, r.err, "AcquireWait(%q, %q)", name, exec)
		require.NotNil(e, r.l, "AcquireWait(%q, %q) must return a lease, never nil, nil", name, exec)
		require.Equal(e, name, r.l.Name, "AcquireWait: Lease.Name")
		require.Equal(e, exec, r.l.ExecutionID, "AcquireWait: Lease.ExecutionID")
		require.NotZero(e, r.l.Token, "AcquireWait: Lease.Token must never be 0")
		return *r.l
	case <-time.After(handOffLimit):
		e.Fatalf("AcquireWait(%q, %q) did not get the freed lock within %v", name, exec, handOffLimit)
		return lock.Lease{}
	}
}

// ended returns the error a waiter returned without a lease, failing the
// clause if it did not return within handOffLimit.
func (e *env) ended(ch <-chan waitResult, what string) error {
	e.Helper()
	select {
	case r := <-ch:
		assert.Nil(e, r.l, "%s: a waiter that fails holds nothing", what)
		return r.err
	case <-time.After(handOffLimit):
		e.Fatalf("%s: AcquireWait did not return within %v", what, handOffLimit)
		return nil
	}
}

// stillWaiting fails the clause if the waiter has returned. It cannot tell
// a waiter that is blocked from one not yet started, so it never fails a
// good provider.
func (e *env) stillWaiting(ch <-chan waitResult, what string) {
	e.Helper()
	select {
	case r := <-ch:
		e.Fatalf("%s: AcquireWait returned (%+v, %v) while the lock is held", what, r.l, r.err)
	default:
	}
}

// testWaitBadInput: AcquireWait refuses bad input as Acquire does, at
// once, even on a held lock.
func testWaitBadInput(e *env, w lockprovider.Waiter) {
	var nilCtx context.Context
	e.acquire(name(0), "a", e.d)
	cases := []struct {
		what string
		ctx  context.Context
		name string
		exec string
		d    time.Duration
	}{
		{"nil ctx", nilCtx, name(0), "b", e.d},
		{"empty name", e.ctx, "", "b", e.d},
		{"empty executionID", e.ctx, name(0), "", e.d},
		{"zero d", e.ctx, name(0), "b", 0},
		{"negative d", e.ctx, name(0), "b", -time.Second},
	}
	for _, c := range cases {
		l, err := w.AcquireWait(c.ctx, c.name, c.exec, c.d)
		assert.ErrorIs(e, err, lease.ErrInvalidArgument, c.what)
		assert.Nil(e, l, c.what)
	}
	e.contend(name(0), "b")
}

// testWaitHandOffOnRelease: a waiter gets the lock once its holder releases
// it, with a greater token, and holds it.
func testWaitHandOffOnRelease(e *env, w lockprovider.Waiter) {
	a := e.acquire(name(0), "a", e.d)
	ch := e.wait(e.ctx, w, name(0), "b")
	e.stillWaiting(ch, "before the release")
	e.release(a)
	b := e.handedOff(ch, name(0), "b")
	assert.Greater(e, b.Token, a.Token, "hand-off token")
	e.contend(name(0), "c")
	assert.Empty(e, e.renew(e.d, a), "the released lease must not be renewed")
	got := e.renew(e.d, b)
	require.Len(e, got, 1, "the waiter's lease renews")

	// A free lock is acquired without waiting.
	e.release(b)
	c := e.handedOff(e.wait(e.ctx, w, name(0), "c"), name(0), "c")
	assert.Greater(e, c.Token, b.Token)
}

// testWaitHandOffOnExpiry: a waiter gets the lock once its holder's lease
// expires, with a greater token; on a fake clock not a nanosecond before.
func testWaitHandOffOnExpiry(e *env, w lockprovider.Waiter) {
	a := e.acquire(name(0), "a", e.short())
	ch := e.wait(e.ctx, w, name(0), "b")
	if e.fake() {
		e.advance(a.ExpiresAt.Sub(e.clock.Now()) - 1)
		e.stillWaiting(ch, "a nanosecond before the expiry")
		e.advance(1)
	}
	b := e.handedOff(ch, name(0), "b")
	assert.Greater(e, b.Token, a.Token, "hand-off token")
	if e.fake() {
		assert.Equal(e, a.ExpiresAt.Add(e.d), b.ExpiresAt, "granted at the expiry, for d")
	} else {
		granted := b.ExpiresAt.Add(-e.d)
		assert.False(e, granted.Before(a.ExpiresAt.Add(-realSlack)), "granted at %v, before the holder's expiry %v", granted, a.ExpiresAt)
	}
	assert.Empty(e, e.renew(e.d, a), "the expired lease must not be renewed after the hand-off")
	e.contend(name(0), "c")
}

// testWaitContextCancelled: a waiter whose context ends (cancelled, or past
// its deadline) returns the context's error and holds nothing; another
// waiter still gets the lock when it is freed.
func testWaitContextCancelled(e *env, w lockprovider.Waiter) {
	a := e.acquire(name(0), "a", e.d)
	ctx, cancel := context.WithCancel(e.ctx)
	cancelled := e.wait(ctx, w, name(0), "b")
	deadline, stop := context.WithTimeout(e.ctx, 20*time.Millisecond)
	defer stop()
	late := e.wait(deadline, w, name(0), "c")
	patient := e.wait(e.ctx, w, name(0), "d")
	e.stillWaiting(cancelled, "before the cancellation")
	cancel()
	assert.ErrorIs(e, e.ended(cancelled, "cancelled"), context.Canceled)
	assert.ErrorIs(e, e.ended(late, "past its deadline"), context.DeadlineExceeded)

	// A context that is done before the call: nothing, even on a free lock.
	l, err := w.AcquireWait(ctx, name(1), "b", e.d)
	assert.ErrorIs(e, err, context.Canceled, "AcquireWait with a cancelled context")
	assert.Nil(e, l)
	e.release(e.acquire(name(1), "e", e.d))

	e.stillWaiting(patient, "while the lock is held")
	e.release(a)
	d := e.handedOff(patient, name(0), "d")
	assert.Greater(e, d.Token, a.Token)
	e.release(d)
	e.release(e.acquire(name(0), "e", e.d)) // b and c hold nothing
}
