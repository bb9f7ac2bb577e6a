package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// A Mutex holds its lock across calls, renewed in the background, until
// Unlock; its Context ends then, with context.Canceled.
func TestMutexHoldsAcrossCallsUntilUnlock(t *testing.T) {
	f := newFixture(t)
	mx := f.m.NewMutex("job")
	lockCtx, cancel := context.WithCancel(context.Background())
	require.NoError(t, mx.Lock(lockCtx))
	cancel() // bounds the wait only: the lock stays held
	l, held := mx.Lease()
	require.True(t, held)
	assert.Equal(t, "job", l.Name)
	assert.Equal(t, "me", l.ExecutionID)

	f.clock.Advance(3 * testLease) // nine renewals later
	assert.True(t, f.held(t, "job"))
	require.NoError(t, mx.Context().Err())
	assert.GreaterOrEqual(t, f.p.renewCount(), 9)

	require.NoError(t, mx.Unlock(context.Background()))
	assert.False(t, f.held(t, "job"))
	assert.ErrorIs(t, context.Cause(mx.Context()), lock.ErrLockLost, "not held: done")
	_, held = mx.Lease()
	assert.False(t, held)
	renews := f.p.renewCount()
	f.clock.Advance(testLease)
	assert.Equal(t, renews, f.p.renewCount(), "no renewal after Unlock")
}

// A lost lock is reported on the Mutex's Context with cause ErrLockLost,
// and by Unlock.
func TestMutexReportsLoss(t *testing.T) {
	f := newFixture(t)
	mx := f.m.NewMutex("job")
	require.NoError(t, mx.Lock(context.Background()))
	ctx := mx.Context()
	f.p.setRenew(func(context.Context, []lock.Lease, time.Duration) ([]lock.Lease, error) { return nil, nil })
	f.clock.Advance(testLease / 3)
	require.Error(t, ctx.Err())
	assert.Same(t, lock.ErrLockLost, context.Cause(ctx))
	err := mx.Unlock(context.Background())
	assert.ErrorIs(t, err, lock.ErrLockLost)
	assert.Equal(t, lock.CodeLockLost, lease.CodeOf(err))
}

// Lock waits for a lock held by another until it is released; TryLock
// does not wait.
func TestMutexLockWaits(t *testing.T) {
	f := newFixture(t)
	m := newManager(t, f.mem, lock.WithExecutionID("me"), lock.WithLeaseDuration(testLease))
	other, err := f.mem.Acquire(context.Background(), "job", "other", testLease)
	require.NoError(t, err)
	require.NotNil(t, other)

	mx := m.NewMutex("job")
	ok, err := mx.TryLock(context.Background())
	require.NoError(t, err)
	assert.False(t, ok, "held by another")

	done := make(chan error, 1)
	go func() { done <- mx.Lock(context.Background()) }()
	require.NoError(t, f.mem.Release(context.Background(), []lock.Lease{*other}))
	require.NoError(t, <-done)
	l, held := mx.Lease()
	require.True(t, held)
	assert.Greater(t, l.Token, other.Token)
	require.NoError(t, mx.Unlock(context.Background()))
}

// A wait cut short by its context holds nothing, and the Mutex can be
// locked again.
func TestMutexLockCancelled(t *testing.T) {
	f := newFixture(t)
	m := newManager(t, f.mem, lock.WithExecutionID("me"), lock.WithLeaseDuration(testLease))
	other, err := f.mem.Acquire(context.Background(), "job", "other", testLease)
	require.NoError(t, err)
	mx := m.NewMutex("job")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, mx.Lock(ctx), context.Canceled)
	_, held := mx.Lease()
	assert.False(t, held)
	require.NoError(t, f.mem.Release(context.Background(), []lock.Lease{*other}))
	ok, err := mx.TryLock(context.Background())
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, mx.Unlock(context.Background()))
}

// Misuse is refused with an error naming it, never a panic or a deadlock.
func TestMutexMisuse(t *testing.T) {
	f := newFixture(t)
	mx := f.m.NewMutex("job")
	err := mx.Unlock(context.Background())
	requireVoice(t, err, "lock")
	assert.ErrorIs(t, err, lease.ErrInvalidArgument)

	require.NoError(t, mx.Lock(context.Background()))
	err = mx.Lock(context.Background())
	assert.ErrorIs(t, err, lease.ErrInvalidArgument, "not reentrant")
	_, err = mx.TryLock(context.Background())
	assert.ErrorIs(t, err, lease.ErrInvalidArgument)
	require.NoError(t, mx.Unlock(context.Background()))

	_, err = f.m.NewMutex("").TryLock(context.Background())
	assert.ErrorIs(t, err, lease.ErrInvalidArgument)
	var nilCtx context.Context
	assert.ErrorIs(t, mx.Lock(nilCtx), lease.ErrInvalidArgument)
	assert.ErrorIs(t, mx.Unlock(nilCtx), lease.ErrInvalidArgument)
}
