package lock_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// The Manager on the system clock, in a synctest bubble: renewals keep the
// lock through many lease durations, and a revocation is noticed at the next
// renewal.
func TestTryLockSystemClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := lease.Must(lease.New())
		defer svc.Close()
		m := newManager(t, lease.Must(lock.NewMemory(svc)), lock.WithLeaseDuration(3*time.Second))
		start := time.Now()
		acquired, err := m.TryLock(t.Context(), "job", func(ctx context.Context, l lock.Lease) error {
			<-time.After(10500 * time.Millisecond) // between renewals, which come every second
			require.NoError(t, ctx.Err(), "renewals keep the lock")
			_, err := svc.Revoke(ctx, lease.ID(l.Token))
			require.NoError(t, err)
			<-ctx.Done()
			assert.Equal(t, 11*time.Second, time.Since(start), "noticed at the next renewal")
			return nil
		})
		assert.True(t, acquired)
		assert.ErrorIs(t, err, lock.ErrLockLost)
	})
}

// hanging is a provider whose Renew blocks until its context is done, like
// a remote provider behind a partition.
type hanging struct{ lock.Provider }

func (hanging) Renew(ctx context.Context, _ []lock.Lease, _ time.Duration) ([]lock.Lease, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A renewal that hangs does not hold the deadline up: fn's context is
// cancelled at the safety deadline, and TryLock returns with the renewal
// abandoned and nothing left running.
func TestTryLockHangingRenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := lease.Must(lease.New())
		defer svc.Close()
		m := newManager(t, hanging{lease.Must(lock.NewMemory(svc))}, lock.WithLeaseDuration(3*time.Second))
		start := time.Now()
		_, err := m.TryLock(t.Context(), "job", func(ctx context.Context, l lock.Lease) error {
			<-ctx.Done()
			assert.Equal(t, 3*time.Second-300*time.Millisecond, time.Since(start), "cancelled at the safety deadline")
			return ctx.Err()
		})
		assert.ErrorIs(t, err, lock.ErrLockLost)
		assert.Equal(t, 2700*time.Millisecond, time.Since(start), "TryLock does not wait for the renewal")
	})
}
