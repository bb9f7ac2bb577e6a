package lockprovider

import (
	"context"
	"time"

	"github.com/leasehold/lease"
)

// The optional capabilities of a Provider. Each embeds Provider, so that a
// value of one is a provider first; a lock.Manager, a lock/election
// Election and the console find them by type assertion on the Provider
// they were given, and do without (or refuse what needs one) when it is
// absent.

// TimeBase is a Provider whose leases expire on a clock of this process,
// such as lock.Memory, whose leases expire on its service's time. A
// lock.Manager over such a provider reads time from it, so that it counts
// renewals and safety deadlines on the very time the leases expire on, and
// lock.NewManager refuses lease.WithClock for it. A provider that wraps one
// should implement TimeBase too, by forwarding (embedding *lock.Memory
// does). Clock may be called from any goroutine.
type TimeBase interface {
	Provider
	// Clock returns the provider's time base: a lease.Clock whose Now never
	// runs backwards, such as a lease.Service's Clock.
	Clock() lease.Clock
}

// ValueAcquirer is a Provider that can attach a small value to a holding,
// which an Inspector then reports. AcquireValue is Acquire with the value:
// the same contract, and the value is stored with the holding for as long
// as it is held (Renew keeps it). value may be nil; it is copied. A value
// longer than MaxValueSize is bad input (CheckValue). Implementations must
// be safe for concurrent use.
type ValueAcquirer interface {
	Provider
	AcquireValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error)
}

// Waiter is a Provider that can wait for a lock without polling: it learns
// when a lock is freed and offers it to its waiters at once.
// lock.Manager's Lock and DoWait use it when the provider has it, and poll
// otherwise (every PollInterval). Implementations must be safe for
// concurrent use and keep this contract:
//
//   - AcquireWait acquires name as Acquire would, waiting while the lock is
//     held or in its lock-delay. It returns a new Lease, never nil, nil.
//   - When ctx is done first it returns ctx.Err() and the caller holds
//     nothing: a lease acquired as ctx ended is released before returning.
//   - Bad input is refused as Acquire refuses it; a failure of the provider
//     is an error.
//
// A lock.Manager over a Waiter that is also a TimeBase counts the lease's
// safety deadline from its grant, ExpiresAt - d on the provider's clock
// (which is the Manager's); over any other Waiter it confirms the lease
// with a Renew, timed on its own clock, before running the function.
type Waiter interface {
	Provider
	AcquireWait(ctx context.Context, name, executionID string, d time.Duration) (*Lease, error)
}

// ValueWaiter is a Waiter that is also a ValueAcquirer and can wait for a
// lock with a value to attach: AcquireWaitValue is AcquireWait that
// acquires as AcquireValue does, with the contracts of both. A
// lock.Manager with a value (lock.WithValue) waits with it; over a
// provider that can wait but not with a value it polls with AcquireValue.
// Implementations must be safe for concurrent use.
type ValueWaiter interface {
	Waiter
	ValueAcquirer
	AcquireWaitValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error)
}

// Inspector is a Provider that can say who holds its locks. Its answers
// are snapshots: a lock may change hands as soon as they are given.
// Implementations must be safe for concurrent use.
type Inspector interface {
	Provider
	// Holder returns the holding of the lock name, and false if it is not
	// held (or its lease has expired).
	Holder(ctx context.Context, name string) (Holding, bool, error)
	// Held returns the holdings of the locks whose names start with prefix
	// (every lock for ""), in name order: at most limit of them when
	// limit > 0, all of them when limit is 0. A negative limit is bad input.
	// The slice and its Values are the caller's.
	Held(ctx context.Context, prefix string, limit int) ([]Holding, error)
}

// WaitInspector is a Provider that can say who waits for its locks: the
// callers of its AcquireWait (or AcquireWaitValue), in the order they will
// be offered the lock. Callers that poll (Acquire, lock.Manager.TryLock)
// are not waiting and are not listed. Its answers are snapshots.
// Implementations must be safe for concurrent use.
type WaitInspector interface {
	Provider
	// Waiting returns the waiters for the lock name, longest waiting
	// first: at most limit of them when limit > 0, all of them when limit
	// is 0. A negative limit or a bad name is bad input (CheckWaiting).
	Waiting(ctx context.Context, name string, limit int) ([]Waiting, error)
}

// HolderWatcher is a Provider that can follow the holder of a lock as it
// changes, the way etcd's watches do, so that lock/election's Observe sees
// a new leader as soon as the provider does instead of polling for it. An
// implementation must be safe for concurrent use.
type HolderWatcher interface {
	Provider
	// WatchHolder calls fn with the holding of the lock name, if it is
	// held, and then with every holding of it the provider learns of (a
	// new holder, or the same one renewed), in the order they happened,
	// until ctx is done or the watch fails. It returns ctx.Err() in the
	// first case and the failure in the second, and calls fn no more once
	// it has returned. fn is called on WatchHolder's goroutine, one call at
	// a time, and never blocks. Like Inspector's Holder, a holding whose
	// lease has expired is not reported.
	WatchHolder(ctx context.Context, name string, fn func(Holding)) error
}
