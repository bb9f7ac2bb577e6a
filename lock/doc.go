// Package lock provides named exclusive locks with fencing tokens, as
// leases, over a pluggable [Provider].
//
// A lock is a name. At most one execution (an executionID) holds it at a
// time, and only for a bounded lease: a holder that stops renewing loses it
// when the lease expires and another execution may take it over. Every
// acquisition carries a fencing token, strictly greater than every token
// issued earlier for the name, so a resource that remembers the highest token
// it has seen (a [Fence]) can refuse the late writes of a holder that lost
// the lock without knowing it.
//
// [Memory] is the in-process provider, built on a [lease.Service]: each lock
// is a key attached to a lease, so an expiring lease frees its lock
// atomically. Other providers (a database, say) implement the same contract;
// package lock/lockprovider is their seam (the Provider interface, its
// value types, the optional capabilities and the checks of the contract's
// arguments) and package lock/locktest checks them.
//
// A [Manager] runs a function under a lock: [Manager.TryLock] and [Do]
// acquire, renew in the background while the function runs, cancel its
// context with cause [ErrLockLost] when the lock is lost or about to be,
// and release when it returns or panics. [NewManager] checks its schedule
// (lease duration, safety margin, retry interval) and returns an error for
// one that cannot hold a lock. [Manager.Lock] and [DoWait] wait for a held
// lock instead of giving up: a waiting provider (lockprovider.Waiter; Memory is one) wakes its waiters, first
// come first served, when the lock is freed; other providers are polled.
// For a lock held across calls rather than around one function,
// [Manager.NewMutex] gives a [Mutex]: Lock, Unlock, and a Context that
// ends when the lock is lost.
// An inspecting provider (lockprovider.Inspector; Memory is one) says who holds a lock, with the small value the
// holder attached ([WithValue]).
//
// Time: a Manager over a provider with a time base (lockprovider.TimeBase, such as
// Memory, whose time is its service's) counts on that time base, so the
// Manager and the leases agree on every instant even when the wall clock
// steps back. A Manager over another provider counts on the clock given
// with [lease.WithClock] (the system's by default), read so that it never runs
// backwards.
//
// Callbacks (the release-error handler, the provider's Renew when a timer
// calls it, the service's notifications) never run under a lock of this
// package, so they may call back into it. A callback that panics is
// recovered and reported to the Manager's panic handler
// ([lease.WithPanicHandler]; logged by default), and the Manager goes on as if it had
// returned.
package lock
