package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/lock"
)

func TestAcquireFreshLock(t *testing.T) {
	p := newTestProvider(t)
	before := time.Now()
	l, err := p.Acquire(ctx, "jobs/daily", "worker-1", 30*time.Second)
	after := time.Now()
	require.NoError(t, err)
	require.NotNil(t, l)
	assert.Equal(t, lock.Lease{Name: "jobs/daily", ExecutionID: "worker-1", ExpiresAt: l.ExpiresAt, Token: 1}, *l)
	// The server shares this host's clock, so its now()+d lies in our window.
	assert.WithinRange(t, l.ExpiresAt, before.Add(30*time.Second-time.Second), after.Add(30*time.Second+time.Second))
	assert.Equal(t, map[string]row{"jobs/daily": {ExecutionID: "worker-1", Token: 1, ExpiresAt: l.ExpiresAt}}, rows(t, p))
}

func TestAcquireHeldIsContentionNotError(t *testing.T) {
	for _, exec := range []string{"worker-1", "worker-2"} {
		t.Run(exec, func(t *testing.T) {
			p := newTestProvider(t)
			held := mustAcquire(t, p, "n", "worker-1")
			l, err := p.Acquire(ctx, "n", exec, long)
			require.NoError(t, err)
			require.Nil(t, l, "the same or another execution must not get a held lock")
			assert.Equal(t, held.Token, uint64(rows(t, p)["n"].Token), "contention must not bump the token")
		})
	}
}

func TestTokensIncreaseAcrossReleaseAndTakeOver(t *testing.T) {
	p := newTestProvider(t)
	var last uint64
	for i := range 20 {
		l := mustAcquire(t, p, "n", "worker")
		require.Greater(t, l.Token, last, "acquisition %d", i)
		last = l.Token
		if i%2 == 0 {
			require.NoError(t, p.Release(ctx, []lock.Lease{l}))
		} else {
			age(t, p, "n", time.Millisecond) // expires instead
		}
	}
	// Tokens come from one sequence: unique across names too.
	assert.Greater(t, mustAcquire(t, p, "other", "worker").Token, last)
}

func TestTakeOverAfterExpiry(t *testing.T) {
	p := newTestProvider(t)
	old := mustAcquire(t, p, "n", "a")
	age(t, p, "n", time.Microsecond)
	cur := mustAcquire(t, p, "n", "b")
	require.Greater(t, cur.Token, old.Token)

	got, err := p.Renew(ctx, []lock.Lease{old}, long)
	require.NoError(t, err)
	assert.Empty(t, got, "an expired holder must not renew")
	require.NoError(t, p.Release(ctx, []lock.Lease{old}))
	requireHeld(t, p, "n")
	assert.Equal(t, "b", rows(t, p)["n"].ExecutionID, "a stale release must not free the new holder")
}

func TestLockDelay(t *testing.T) {
	const delay = time.Hour
	tests := []struct {
		name  string
		ended func(t *testing.T, p *LockProvider, l lock.Lease)
		free  bool
	}{
		{"released", func(t *testing.T, p *LockProvider, l lock.Lease) {
			require.NoError(t, p.Release(ctx, []lock.Lease{l}))
		}, true},
		{"expired within the delay", func(t *testing.T, p *LockProvider, l lock.Lease) {
			age(t, p, l.Name, delay-time.Minute)
		}, false},
		{"expired past the delay", func(t *testing.T, p *LockProvider, l lock.Lease) {
			age(t, p, l.Name, delay)
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestProvider(t, WithLockDelay(delay))
			l := mustAcquire(t, p, "n", "a")
			tt.ended(t, p, l)
			got, err := p.Acquire(ctx, "n", "b", long)
			require.NoError(t, err)
			if !tt.free {
				require.Nil(t, got)
				renewed, err := p.Renew(ctx, []lock.Lease{l}, long)
				require.NoError(t, err)
				assert.Empty(t, renewed, "the delay must not revive the expired lease")
				return
			}
			require.NotNil(t, got)
			assert.Greater(t, got.Token, l.Token)
		})
	}
}

func TestRenew(t *testing.T) {
	p := newTestProvider(t)
	a := mustAcquire(t, p, "a", "x")
	b := mustAcquire(t, p, "b", "x")
	c := mustAcquire(t, p, "c", "x")
	expired := mustAcquire(t, p, "expired", "x")
	age(t, p, "expired", time.Millisecond)
	released := mustAcquire(t, p, "released", "x")
	require.NoError(t, p.Release(ctx, []lock.Lease{released}))

	with := func(l lock.Lease, f func(*lock.Lease)) lock.Lease { f(&l); return l }
	tests := []struct {
		name  string
		in    []lock.Lease
		wantN []string // names renewed, in order
	}{
		{"empty", nil, nil},
		{"all held, input order kept", []lock.Lease{c, a, b}, []string{"c", "a", "b"}},
		{"partial", []lock.Lease{expired, b, released, a}, []string{"b", "a"}},
		{"duplicate returned twice", []lock.Lease{a, b, a}, []string{"a", "b", "a"}},
		{"one lease", []lock.Lease{b}, []string{"b"}},
		{"one lease twice", []lock.Lease{b, b}, []string{"b", "b"}},
		{"one lease among skipped", []lock.Lease{expired, c, released}, []string{"c"}},
		{"unknown name", []lock.Lease{with(a, func(l *lock.Lease) { l.Name = "nope" })}, nil},
		{"other execution", []lock.Lease{with(a, func(l *lock.Lease) { l.ExecutionID = "y" })}, nil},
		{"other token", []lock.Lease{with(a, func(l *lock.Lease) { l.Token++ })}, nil},
		{"token never issued", []lock.Lease{with(a, func(l *lock.Lease) { l.Token = 0 }), with(b, func(l *lock.Lease) { l.Token = math.MaxUint64 })}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := rows(t, p)
			got, err := p.Renew(ctx, tt.in, 2*long)
			require.NoError(t, err)
			var names []string
			for _, l := range got {
				names = append(names, l.Name)
				want := map[string]lock.Lease{"a": a, "b": b, "c": c}[l.Name]
				assert.Equal(t, want.ExecutionID, l.ExecutionID)
				assert.Equal(t, want.Token, l.Token, "Renew keeps the token")
				assert.True(t, l.ExpiresAt.After(before[l.Name].ExpiresAt), "ExpiresAt of %q must move forward", l.Name)
				assert.Equal(t, rows(t, p)[l.Name].ExpiresAt, l.ExpiresAt, "returned ExpiresAt is the stored one")
			}
			assert.Equal(t, tt.wantN, names)
		})
	}
}

func TestRenewShortens(t *testing.T) {
	// Renew sets now+d, whatever was left: a shorter d shortens the lease.
	p := newTestProvider(t)
	l := mustAcquire(t, p, "n", "x")
	got, err := p.Renew(ctx, []lock.Lease{l}, time.Minute)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.True(t, got[0].ExpiresAt.Before(l.ExpiresAt))
}

func TestRelease(t *testing.T) {
	p := newTestProvider(t)
	a := mustAcquire(t, p, "a", "x")
	b := mustAcquire(t, p, "b", "x")
	c := mustAcquire(t, p, "c", "x")
	otherExec, otherToken := c, c
	otherExec.ExecutionID = "y"
	otherToken.Token++

	// Foreign, unknown and never-issued leases are ignored, alongside ones
	// that are released.
	unknown := lock.Lease{Name: "nope", ExecutionID: "x", Token: 1}
	neverIssued := lock.Lease{Name: "c", ExecutionID: "x", Token: math.MaxUint64}
	require.NoError(t, p.Release(ctx, []lock.Lease{a, otherExec, unknown, b, otherToken, neverIssued, a}))
	requireHeld(t, p, "c")
	for _, n := range []string{"a", "b"} {
		got := mustAcquire(t, p, n, "z")
		assert.Greater(t, got.Token, a.Token)
	}
	// Idempotent: releasing again, or releasing what is now someone else's,
	// changes nothing.
	before := rows(t, p)
	require.NoError(t, p.Release(ctx, []lock.Lease{a, b}))
	require.NoError(t, p.Release(ctx, nil))
	assert.Equal(t, before, rows(t, p))
}

func TestReleaseIgnoresExpired(t *testing.T) {
	// An expired lease is no longer its holder's: releasing it must not cut
	// a lock delay short.
	p := newTestProvider(t, WithLockDelay(time.Hour))
	l := mustAcquire(t, p, "n", "x")
	age(t, p, "n", time.Minute)
	require.NoError(t, p.Release(ctx, []lock.Lease{l}))
	requireHeld(t, p, "n")
}

func TestBadInputChangesNothing(t *testing.T) {
	p := newTestProvider(t)
	held := mustAcquire(t, p, "n", "x")
	good := []lock.Lease{held}
	var nilCtx context.Context
	long := strings.Repeat("n", MaxNameLen+1)
	withName := func(name string) []lock.Lease {
		return []lock.Lease{held, {Name: name, ExecutionID: "x", Token: 1}}
	}
	tests := []struct {
		name  string
		call  func() error
		field string
	}{
		{"acquire nil ctx", func() error { _, err := p.Acquire(nilCtx, "m", "x", time.Second); return err }, "ctx"},
		{"acquire empty name", func() error { _, err := p.Acquire(ctx, "", "x", time.Second); return err }, "name"},
		{"acquire empty execution", func() error { _, err := p.Acquire(ctx, "m", "", time.Second); return err }, "executionID"},
		{"acquire zero d", func() error { _, err := p.Acquire(ctx, "m", "x", 0); return err }, "d"},
		{"acquire negative d", func() error { _, err := p.Acquire(ctx, "m", "x", -time.Second); return err }, "d"},
		{"acquire long name", func() error { _, err := p.Acquire(ctx, long, "x", time.Second); return err }, "name"},
		{"acquire long execution", func() error { _, err := p.Acquire(ctx, "m", long, time.Second); return err }, "executionID"},
		{"acquire NUL", func() error { _, err := p.Acquire(ctx, "m\x00", "x", time.Second); return err }, "name"},
		{"acquire bad UTF-8", func() error { _, err := p.Acquire(ctx, "m\xff", "x", time.Second); return err }, "name"},
		{"renew nil ctx", func() error { _, err := p.Renew(nilCtx, good, time.Second); return err }, "ctx"},
		{"renew zero d", func() error { _, err := p.Renew(ctx, good, 0); return err }, "d"},
		{"renew empty name", func() error { _, err := p.Renew(ctx, withName(""), time.Second); return err }, "leases[1].Name"},
		{"renew empty execution", func() error {
			_, err := p.Renew(ctx, []lock.Lease{held, {Name: "n", Token: 1}}, time.Second)
			return err
		}, "leases[1].ExecutionID"},
		{"renew NUL", func() error { _, err := p.Renew(ctx, withName("\x00"), time.Second); return err }, "leases[1].Name"},
		{"release nil ctx", func() error { return p.Release(nilCtx, good) }, "ctx"},
		{"release empty name", func() error { return p.Release(ctx, withName("")) }, "leases[1].Name"},
		{"release long name", func() error { return p.Release(ctx, withName(long)) }, "leases[1].Name"},
		{"migrate nil ctx", func() error { return p.Migrate(nilCtx) }, "ctx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := rows(t, p)
			requireInvalid(t, tt.call(), tt.field)
			assert.Equal(t, before, rows(t, p), "bad input must change nothing")
		})
	}
}

func TestMicros(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int64
	}{
		{time.Nanosecond, 1},
		{time.Microsecond, 1},
		{time.Microsecond + 1, 2},
		{1500 * time.Millisecond, 1_500_000},
		{math.MaxInt64, math.MaxInt64/1000 + 1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, micros(tt.d), "micros(%v)", tt.d)
	}
}

func TestSubMicrosecondLeaseIsNotEmpty(t *testing.T) {
	p := newTestProvider(t)
	l, err := p.Acquire(ctx, "n", "x", time.Nanosecond)
	require.NoError(t, err)
	require.NotNil(t, l)
}

func TestBatchesInOppositeOrdersDoNotDeadlock(t *testing.T) {
	// Two batches over the same rows in opposite orders would deadlock if
	// each locked rows in its input order; PostgreSQL would then abort one
	// with an error after deadlock_timeout.
	p := newTestProvider(t)
	const n = 200
	leases := make([]lock.Lease, n)
	for i := range leases {
		leases[i] = mustAcquire(t, p, fmt.Sprintf("n%03d", i), "x")
	}
	reversed := slices.Clone(leases)
	slices.Reverse(reversed)
	for round := range 10 {
		var wg sync.WaitGroup
		var errA, errB error
		wg.Go(func() { _, errA = p.Renew(ctx, leases, long) })
		wg.Go(func() { _, errB = p.Renew(ctx, reversed, long) })
		wg.Wait()
		require.NoError(t, errA, "round %d", round)
		require.NoError(t, errB, "round %d", round)
	}
	var wg sync.WaitGroup
	var renewed []lock.Lease
	var errA, errB error
	wg.Go(func() { renewed, errA = p.Renew(ctx, leases, long) })
	wg.Go(func() { errB = p.Release(ctx, reversed) })
	wg.Wait()
	require.NoError(t, errA)
	require.NoError(t, errB)
	// Whatever the interleaving, every lock ends released.
	for name, r := range rows(t, p) {
		assert.True(t, r.Released, "%s not released (%d renewed first)", name, len(renewed))
	}
}
