// Package election elects one leader among candidates that contend for a
// lock of a [lock.Provider]: the candidate holding the lock leads, for as
// long as it renews its lease.
//
// An [Election] is a lock name on a provider that can wait for a lock
// ([lockprovider.Waiter]) and say who holds it ([lockprovider.Inspector]); [lock.Memory],
// the PostgreSQL provider and the etcd provider are all three. A candidate
// calls [Election.Campaign], which blocks until it holds the lock and
// returns a [Leadership]: its Context ends, with a cause, when the
// leadership is lost, its Token is the lock's fencing token, and Resign
// gives the leadership up at once. Anyone may ask who leads
// ([Election.Leader]) or follow the changes of leader
// ([Election.Observe]). [Election.Run] does it all in a loop: it
// campaigns, calls
// OnStartedLeading, OnStoppedLeading and OnNewLeader ([Callbacks]), and
// campaigns again, until its context ends.
//
// Every candidate attaches a small value (its host name, its address) that
// Leader and Observe report. It travels in the lock's execution ID, so
// that a provider that stores no values (PostgreSQL) can carry it, and
// also as the holding's value on a provider that stores one
// ([lockprovider.ValueWaiter]), where [lockprovider.Inspector] users see it.
//
// Renewal is the one [lock.Manager] uses: every third of the lease
// duration, retried on failure, given up a safety margin before the last
// confirmed expiry. Cancelling the context given to Campaign ends the
// leadership and releases the lock at once, so the next leader does not
// wait for the lease to run out.
//
// Callbacks never run under a lock of this package. A callback that panics
// is recovered and reported to the Election's panic handler
// ([lease.WithPanicHandler]; logged by default), and the Election goes on
// as if it had returned.
package election
