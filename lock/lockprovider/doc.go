// Package lockprovider is the lock-provider seam: what a storage for
// package lock's locks implements, and all it needs to do so. It never
// imports package lock: lock imports it, and names its types for users
// (lock.Lease is lockprovider.Lease).
//
// Who imports what. A program that takes locks imports package lock (its
// Manager, Mutex, Memory, options), maybe lock/election, and a provider's
// package (postgres, sqlite, etcd, replicated); it never needs this one. A
// provider implementation imports this package, and package lock/locktest
// (and lock/election/electiontest) in its tests.
//
// Required. Every provider implements [Provider]: Acquire, Renew and
// Release, keeping the contract its documentation states, with the value
// type [Lease]. Its input it checks itself, first, with the Check
// functions ([CheckAcquire], [CheckRenew], [CheckRelease]) or a [Checker]:
// a lock.Manager passes its input through unchecked, so the provider is
// the one place it is checked. The errors are a *lease.Error with code
// lease.CodeInvalidArgument, the message prefixed "lock:" (the contract's
// check, whichever provider runs it) and Field naming the argument ("name",
// "leases[2].ExecutionID"); a provider's own limits (the longest name a
// column holds, say) a Checker reports under the provider's package name.
//
//	func (p *Provider) Acquire(ctx context.Context, name, executionID string, d time.Duration) (*lockprovider.Lease, error) {
//		if err := lockprovider.CheckAcquire(ctx, name, executionID, d); err != nil {
//			return nil, err
//		}
//		...
//	}
//
// Optional. Each capability is an interface that embeds Provider; a
// lock.Manager, an election and the console find them by type assertion:
//
//   - [Waiter]: AcquireWait waits for a held lock without polling (without
//     one, a Manager polls every [PollInterval]).
//   - [ValueAcquirer]: AcquireValue attaches a small value to the holding
//     (at most [MaxValueSize]; [CheckValue]); lock.WithValue needs it.
//   - [ValueWaiter]: a Waiter and ValueAcquirer that waits with a value,
//     AcquireWaitValue. A Waiter that cannot keep values does not take one.
//   - [Inspector]: Holder and Held say who holds what ([Holding]).
//   - [WaitInspector]: Waiting lists a lock's waiters ([Waiting];
//     [CheckWaiting]).
//   - [TimeBase]: Clock is the lease.Clock the leases expire on, which a
//     Manager then counts on.
//   - [HolderWatcher]: WatchHolder follows a lock's holder as it changes,
//     for an election's Observe.
//
// Which shipped provider has which, a table that a test checks against the
// code (docs/capabilities.md shows the same):
//
//	provider                 Waiter  ValueAcquirer  ValueWaiter  Inspector  WaitInspector  TimeBase  HolderWatcher
//	lock.Memory              yes     yes            yes          yes        yes            yes       -
//	postgres.LockProvider    yes     -              -            yes        -              -         -
//	sqlite.LockProvider      yes     -              -            yes        -              -         -
//	etcd.Provider            yes     yes            yes          yes        -              -         yes
//	replicated.LockProvider  yes     yes            yes          yes        yes            -         -
//
// Conformance. locktest.TestProvider runs the Provider contract and then,
// for each capability the provider has, that capability's clauses; it
// skips the others, saying which interface the provider does not
// implement, and returns the capabilities it exercised.
package lockprovider
