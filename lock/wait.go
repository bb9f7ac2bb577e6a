package lock

import (
	"context"
	"time"

	"github.com/leasehold/lease/internal/lockkit"
)

// Waiter is implemented by a Provider that can wait for a lock without
// polling: it learns when a lock is freed and offers it to its waiters at
// once. Manager.Lock uses it when the provider has it, and polls otherwise.
// Implementations must be safe for concurrent use and keep this contract:
//
//   - AcquireWait acquires name as Acquire (or AcquireValue, with value)
//     would, waiting while the lock is held or in its lock-delay. It returns
//     a new Lease, never nil, nil.
//   - When ctx is done first it returns ctx.Err() and the caller holds
//     nothing: a lease acquired as ctx ended is released before returning.
//   - Bad input is refused as Acquire and lockprovider.CheckValue refuse it; a failure of
//     the provider is an error.
//
// A Manager over a Waiter that is also a TimeBase counts the lease's safety
// deadline from its grant, ExpiresAt - d on the provider's clock (which is
// the Manager's); over any other Waiter it confirms the lease with a Renew,
// timed on its own clock, before running the function.
type Waiter interface {
	AcquireWait(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error)
}

// AcquireWait acquires the lock name for executionID with a lease of d and
// value attached (as AcquireValue), waiting while it is held or in its
// lock-delay, until ctx is done. It makes Memory a Waiter.
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
func (m *Memory) AcquireWait(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error) {
	if err := lockkit.CheckAcquire(ctx, name, executionID, d); err != nil {
		return nil, err
	}
	if err := lockkit.CheckValue(value, MaxValueSize); err != nil {
		return nil, err
	}
	l, err := m.locks.AcquireWait(ctx, name, executionID, d, value)
	return (*Lease)(l), err
}
