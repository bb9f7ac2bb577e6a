package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/lock"
)

// The Manager of package lock runs unchanged over this provider, on the
// real clock: these tests wait for events (a renewal seen in the table, a
// cancelled context), never for a fixed time.

func TestManagerTryLock(t *testing.T) {
	p := newTestProvider(t)
	a := newManager(t, p, lock.WithExecutionID("a"))
	b := newManager(t, p, lock.WithExecutionID("b"))
	ran := false
	acquired, err := a.TryLock(ctx, "job", func(ctx context.Context, l lock.Lease) error {
		ran = true
		assert.Equal(t, "a", rows(t, p)["job"].ExecutionID)
		inner, err := b.TryLock(ctx, "job", func(context.Context, lock.Lease) error {
			t.Error("b ran while a held the lock")
			return nil
		})
		assert.NoError(t, err)
		assert.False(t, inner, "contention is false, nil")
		return nil
	})
	require.NoError(t, err)
	require.True(t, acquired)
	require.True(t, ran)
	assert.True(t, rows(t, p)["job"].Released, "TryLock releases when fn returns")

	r, err := lock.Do(ctx, b, "job", func(_ context.Context, l lock.Lease) (uint64, error) { return l.Token, nil })
	require.NoError(t, err)
	assert.True(t, r.Acquired)
	assert.Positive(t, r.Value)
}

// newManager is lock.NewManager for a configuration the test knows is
// valid.
func newManager(t *testing.T, p lock.Provider, opts ...lock.Option) *lock.Manager {
	t.Helper()
	m, err := lock.NewManager(p, opts...)
	require.NoError(t, err)
	return m
}

// waitCtx bounds a wait for an event.
func waitCtx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestManagerRenewsInBackground(t *testing.T) {
	p := newTestProvider(t)
	// Renewals every d/3 must each land within d-d/3-margin (830ms), which
	// a loaded machine running -race can still manage.
	const d = 2 * time.Second
	m := newManager(t, p, lock.WithLeaseDuration(d), lock.WithSafetyMargin(500*time.Millisecond))
	acquired, err := m.TryLock(ctx, "job", func(fnCtx context.Context, l lock.Lease) error {
		// Watch the row until the Manager has renewed the lease twice: the
		// lock then outlived its first lease.
		wait := waitCtx(t)
		first := l.ExpiresAt
		for rows(t, p)["job"].ExpiresAt.Before(first.Add(d / 2)) {
			require.NoError(t, wait.Err(), "no renewal seen")
			require.NoError(t, fnCtx.Err(), "the lock was lost")
		}
		requireHeld(t, p, "job")
		assert.Equal(t, l.Token, uint64(rows(t, p)["job"].Token), "renewal keeps the token")
		return nil
	})
	require.NoError(t, err)
	require.True(t, acquired)
}

func TestManagerCancelsWhenLockLost(t *testing.T) {
	p := newTestProvider(t)
	m := newManager(t, p, lock.WithLeaseDuration(300*time.Millisecond))
	acquired, err := m.TryLock(ctx, "job", func(fnCtx context.Context, l lock.Lease) error {
		// Someone takes the lock over behind the holder's back.
		age(t, p, "job", 0)
		mustAcquire(t, p, "job", "thief")
		select {
		case <-fnCtx.Done():
			assert.ErrorIs(t, context.Cause(fnCtx), lock.ErrLockLost)
		case <-waitCtx(t).Done():
			t.Error("fn's context was not cancelled after the lock was lost")
		}
		return nil
	})
	require.True(t, acquired)
	require.ErrorIs(t, err, lock.ErrLockLost)
	assert.Equal(t, "thief", rows(t, p)["job"].ExecutionID, "the holder's release must not free the thief's lock")
}

// TestManagerLockCancelledAsTheHolderReleases: a waiting Lock whose context
// ends just as the holder releases, its attempt perhaps in flight, holds
// nothing once it returns: not when it returns, and not later (the next
// round's holder finds the lock free). The cancel lands at a slightly
// different point of the hand-off in each round.
func TestManagerLockCancelledAsTheHolderReleases(t *testing.T) {
	p := newTestProvider(t)
	started := waiting(p)
	m := newManager(t, p, lock.WithExecutionID("waiter"), lock.WithLeaseDuration(10*time.Second))
	const rounds = 200
	var cancelled int
	for i := range rounds {
		held := mustAcquire(t, p, "job", "holder")
		c, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- m.Lock(c, "job", func(context.Context, lock.Lease) error { return nil })
		}()
		awaitWaiting(t, started, "job")
		require.NoError(t, p.Release(ctx, []lock.Lease{held}))
		for range i % 3 { // a round trip or two later
			_, err := p.pool.Exec(ctx, "SELECT 1")
			require.NoError(t, err)
		}
		cancel()
		var err error
		select {
		case err = <-done:
		case <-waitCtx(t).Done():
			t.Fatal("Lock did not return")
		}
		if err != nil {
			require.ErrorIs(t, err, context.Canceled, "round %d", i)
			cancelled++
		}
		h, ok, err := p.Holder(ctx, "job")
		require.NoError(t, err)
		require.False(t, ok, "round %d: held by %+v after the waiter returned", i, h)
	}
	t.Logf("%d of %d waiters gave up", cancelled, rounds)
}
