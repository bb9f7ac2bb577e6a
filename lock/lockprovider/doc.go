// Package lockprovider is for authors of a [lock.Provider]: the checks of
// the contract's arguments, so that every provider refuses the same bad
// input with the same error, and the interval at which a [lock.Manager]
// polls a provider that cannot wait.
//
// A provider calls the check of an operation first, before it does any
// work or sends anything, and returns its error as it is: a *lease.Error
// with code lease.CodeInvalidArgument, the message prefixed "lock:" (the
// contract's check, whichever provider runs it) and Field naming the
// argument ("name", "leases[2].ExecutionID"). Its own limits (the longest
// name a column holds, say) it checks after, under its own package name:
// a [Checker] does both.
//
//	func (p *Provider) Acquire(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
//		if err := lockprovider.CheckAcquire(ctx, name, executionID, d); err != nil {
//			return nil, err
//		}
//		...
//	}
//
// Package lock/locktest checks that a provider does.
//
// Users of locks need nothing here: package lock is theirs.
package lockprovider
