package lock

import (
	"context"
	"time"

	"github.com/leasehold/lease/lock/lockprovider"
)

// AcquireWait acquires the lock name for executionID with a lease of d,
// waiting while it is held or in its lock-delay, until ctx is done. It
// makes Memory a lockprovider.Waiter; AcquireWaitValue is the same wait
// with a value attached.
//
// Waiting is not polling. The Memory's waiters for a name form a queue, and
// only the first of them tries to acquire: when the lock is freed (a
// Release through this Memory, or the service's notice that the lock's
// lease ended: revoked or expired), or when its lock-delay ends (a timer on
// the service's Clock), the first waiter is woken and tries at once. The
// longest waiter is thus offered the lock first; a waiter whose context
// ends leaves the queue, and if it was first, the next one gets its turn at
// once. Callers of Acquire and TryLock do not queue: one may take a freed
// lock before the first waiter's attempt, which then waits for the next
// release without losing its place.
//
// The first AcquireWait subscribes the Memory to its service's endings
// (lease.Service.OnEnd) for the life of the service. A waiter is woken by
// an expiry only once the service delivers the ending, so a notification
// callback of the service that waits for a lock that only an expiry can
// free waits until its ctx ends; Release wakes waiters directly.
//
// On a closed service it fails with an error matching lease.ErrClosed.
func (m *Memory) AcquireWait(ctx context.Context, name, executionID string, d time.Duration) (*Lease, error) {
	return m.AcquireWaitValue(ctx, name, executionID, d, nil)
}

// AcquireWaitValue is AcquireWait with value attached to the holding (a
// copy), as AcquireValue attaches it; it makes Memory a
// lockprovider.ValueWaiter. A value longer than MaxValueSize is refused
// with an error matching lease.ErrInvalidArgument.
func (m *Memory) AcquireWaitValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error) {
	if err := lockprovider.CheckAcquire(ctx, name, executionID, d); err != nil {
		return nil, err
	}
	if err := lockprovider.CheckValue(value); err != nil {
		return nil, err
	}
	l, err := m.locks.AcquireWait(ctx, name, executionID, d, value)
	return (*Lease)(l), err
}
