package replicated

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/keylock"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// LockProvider is a lock.Provider on a Node: named locks with fencing
// tokens, kept by the cluster, so that the replicas of a service can lock
// and elect a leader (lock/election) with no other database. It is also a
// lockprovider.ValueAcquirer, a lockprovider.Waiter, a lockprovider.Inspector and a
// lockprovider.WaitInspector, and runs the same code as lock.Memory, on the node.
//
// Each lock is a key (the prefix, "lock/" by default, then the name)
// attached to a lease of the cluster, granted with its key in one committed
// entry only if the key is absent; the key's value holds the execution ID
// and the holder's value. An expiring lease deletes its key, and so frees
// the lock, on every node at the same entry of the log. The fencing token
// is the lease's ID: the cluster issues IDs in increasing order, across
// failovers too, and never reuses one, so a lock.Fence keeps out the
// writes of a holder that lost its lock.
//
// Every call is a write or a linearizable read of the node (a follower
// forwards it to the leader), so every node sees the same holders. A
// node's waiters (AcquireWait) queue per name, first come first served,
// and the first of them tries when the node applies the ending of the
// lock's lease (Node.OnEnd), on a leader or a follower, or at once when
// the lock is released through this provider. Across nodes there is no
// queue: the first waiters of several nodes each try when their node
// applies the ending, and the leader grants the lock to whichever attempt
// it commits first. A node that catches up by installing a snapshot does
// not see the endings it skips, and a lock key deleted outside the provider
// ends no lease, so the first waiter also tries again after the recheck
// interval (WithLockRecheck, 2 s by default) without a wake-up.
//
// ExpiresAt is on the cluster's time, the leader's clock. The provider is
// not a lockprovider.TimeBase: a Manager over it times renewals on its own clock
// from when it sent the acquisition. It has no lock-delay: the record of
// how a lock's last lease ended would live in one process, and a lock
// taken through another node would escape it.
//
// A write whose leader lost its place while committing it is settled by
// the node (see Node); one it could not settle before the caller's context
// ended fails with ErrOutcomeUnknown: an Acquire that fails so may have
// been granted, and the lock is then held by a lease nobody renews until
// it expires, d after the grant. After the node is closed every call fails
// with an error matching lease.ErrClosed, and waiters stop waiting.
//
// Use one LockProvider per node and key prefix: it subscribes to the
// node's endings for the node's life. A LockProvider is safe for
// concurrent use.
type LockProvider struct {
	locks *keylock.Locks
}

var (
	_ lock.Provider              = (*LockProvider)(nil)
	_ lockprovider.ValueAcquirer = (*LockProvider)(nil)
	_ lockprovider.ValueWaiter   = (*LockProvider)(nil)
	_ lockprovider.Inspector     = (*LockProvider)(nil)
	_ lockprovider.WaitInspector = (*LockProvider)(nil)
)

// DefaultLockRecheck is how long the first waiter of a lock waits for the
// node to apply an ending before it tries again anyway.
const DefaultLockRecheck = 2 * time.Second

const opNewLockProvider = "NewLockProvider"

// NewLockProvider returns a LockProvider keeping its locks on n. A nil n or
// a bad option gets a *lease.Error with Code lease.CodeInvalidArgument
// naming it, and no provider.
func NewLockProvider(n *Node, opts ...LockOption) (*LockProvider, error) {
	if n == nil {
		return nil, invalidOp(opNewLockProvider, "n", "node must not be nil")
	}
	o := lockOptions{prefix: "lock/", purpose: lease.Operation, recheck: DefaultLockRecheck}
	for _, opt := range opts {
		if opt == nil {
			o.refuse("LockOption", "option must not be nil")
			continue
		}
		opt.applyLock(&o)
	}
	if o.bad != nil {
		return nil, o.bad
	}
	return &LockProvider{locks: keylock.New(keylock.Config{
		Backend: n,
		Clock:   lease.SystemClock(),
		Done:    n.closing,
		Package: "replicated",
		Prefix:  o.prefix,
		Purpose: o.purpose,
		Recheck: o.recheck,
	})}, nil
}

// Acquire grants a lease of d to executionID with the lock's key attached,
// only if the key is absent; a held lock gets nil, nil.
func (p *LockProvider) Acquire(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	return p.AcquireValue(ctx, name, executionID, d, nil)
}

// AcquireValue is Acquire that also stores value (a copy) with the
// holding, for Holder and Held to report; it makes LockProvider a
// lockprovider.ValueAcquirer. A value longer than lock.MaxValueSize is refused
// with an error matching lease.ErrInvalidArgument.
func (p *LockProvider) AcquireValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	if err := checkAcquire(ctx, name, executionID, d, value); err != nil {
		return nil, err
	}
	l, err := p.locks.Acquire(ctx, name, executionID, d, value)
	return (*lock.Lease)(l), err
}

// AcquireWait acquires the lock name for executionID with a lease of d,
// waiting while it is held, until ctx is done: AcquireWaitValue with no
// value. It makes LockProvider a lockprovider.Waiter.
func (p *LockProvider) AcquireWait(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	return p.AcquireWaitValue(ctx, name, executionID, d, nil)
}

// AcquireWaitValue acquires the lock name for executionID with a lease of
// d and value attached (as AcquireValue), waiting while it is held, until
// ctx is done; it makes LockProvider a lockprovider.ValueWaiter. The waiters of this provider
// are served first come first served; see LockProvider for what holds
// across nodes. On a closed node it fails with an error matching
// lease.ErrClosed.
func (p *LockProvider) AcquireWaitValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	if err := checkAcquire(ctx, name, executionID, d, value); err != nil {
		return nil, err
	}
	l, err := p.locks.AcquireWait(ctx, name, executionID, d, value)
	return (*lock.Lease)(l), err
}

// Renew extends the given leases that still hold their locks to now+d and
// returns them, in input order. An error (a cancelled context, a closed
// node, no leader, d outside the service's TTL bounds) stops it; the
// leases renewed before it are returned with it.
func (p *LockProvider) Renew(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
	if err := lockprovider.CheckRenew(ctx, leases, d); err != nil {
		return nil, ownInput(err)
	}
	got, err := p.locks.Renew(ctx, keylock.ToLeases(leases), d)
	return keylock.FromLeases[lock.Lease](got), err
}

// Release revokes the leases of the given locks that are still held by
// them. Leases that are released, expired, unknown or superseded are
// skipped. An error (a cancelled context, a closed node, no leader) stops
// it.
func (p *LockProvider) Release(ctx context.Context, leases []lock.Lease) error {
	if err := lockprovider.CheckRelease(ctx, leases); err != nil {
		return ownInput(err)
	}
	return p.locks.Release(ctx, keylock.ToLeases(leases))
}

// Holder returns who holds the lock name, from a linearizable read of the
// lock's key and of its lease; it makes LockProvider a lockprovider.Inspector.
func (p *LockProvider) Holder(ctx context.Context, name string) (lock.Holding, bool, error) {
	if err := lockprovider.CheckHolder(ctx, name); err != nil {
		return lock.Holding{}, false, ownInput(err)
	}
	h, ok, err := p.locks.Holder(ctx, name)
	return lock.Holding(h), ok, err
}

// Held returns the locks held whose names start with prefix, in name
// order, from one linearizable scan of the lock keys and a read of each
// lock's lease; it makes LockProvider a lockprovider.Inspector. A lock whose lease
// ends between the scan and the read of its lease is left out.
func (p *LockProvider) Held(ctx context.Context, prefix string, limit int) ([]lock.Holding, error) {
	if err := lockprovider.CheckHeld(ctx, limit); err != nil {
		return nil, ownInput(err)
	}
	hs, err := p.locks.Held(ctx, prefix, limit)
	if err != nil {
		return nil, err
	}
	out := make([]lock.Holding, len(hs))
	for i, h := range hs {
		out[i] = lock.Holding(h)
	}
	return out, nil
}

// Waiting returns the callers of this provider's AcquireWait waiting for
// the lock name, longest waiting first (Since on this process's clock); it
// makes LockProvider a lockprovider.WaitInspector. Waiters through other nodes, or
// other providers, are not listed.
func (p *LockProvider) Waiting(ctx context.Context, name string, limit int) ([]lock.Waiting, error) {
	const op = "waiting"
	switch {
	case ctx == nil:
		return nil, invalidOp(op, "ctx", "must not be nil")
	case name == "":
		return nil, invalidOp(op, "name", "must not be empty")
	case limit < 0:
		return nil, invalidOp(op, "limit", strconv.Itoa(limit)+" is negative")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ws, err := p.locks.Waiting(name, limit)
	if ws == nil {
		return nil, err
	}
	out := make([]lock.Waiting, len(ws))
	for i, w := range ws {
		out[i] = lock.Waiting(w)
	}
	return out, err
}

// checkAcquire applies the contract's checks of an acquisition and of its
// value.
func checkAcquire(ctx context.Context, name, executionID string, d time.Duration, value []byte) error {
	if err := lockprovider.CheckAcquire(ctx, name, executionID, d); err != nil {
		return ownInput(err)
	}
	return ownInput(lockprovider.CheckValue(value))
}

// ownInput gives an input error of package lock's checks this package's
// voice, keeping its code and field.
func ownInput(err error) error {
	var le *lease.Error
	if !errors.As(err, &le) {
		return err
	}
	c := *le
	c.Package = "replicated"
	return &c
}
