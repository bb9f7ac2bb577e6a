package lock

import (
	"context"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/keylock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// Memory is the in-process Provider. Each lock is a key (the prefix, "lock/"
// by default, then the name) attached to a lease of a lease.Service, held by
// the executionID, whose value encodes the executionID and the value the
// holder attached (AcquireValue). The service is the only record of who
// holds what: an expiring lease deletes its key, and so frees the lock,
// atomically. Callers of AcquireWait queue per name and are woken when the
// lock is freed (lockprovider.Waiter).
//
// The fencing token is the lease's ID: the service issues IDs in increasing
// order and never reuses one, so tokens grow across expiry and take-over,
// and an ID names exactly one grant, which makes Renew and Release by ID
// immune to a take-over racing them.
//
// A Memory reads time only from its service (its Clock), and is a lockprovider.TimeBase
// for a Manager over it. Once the service is closed, Acquire, Renew and
// Release fail with an error matching lease.ErrClosed.
//
// Locks must be renewed and released only through the Memory (or a Manager
// on it); use one Memory per service and key prefix. A Memory is safe for
// concurrent use, and holds no lock of its own while it calls the service,
// so the service's notifications may call back into it.
type Memory struct {
	svc   *lease.Service
	locks *keylock.Locks
}

// NewMemory returns a Memory storing its locks in svc. A nil svc or a bad
// option (see MemoryOption) gets a *lease.Error with Code
// lease.CodeInvalidArgument naming it, and no Memory.
func NewMemory(svc *lease.Service, opts ...MemoryOption) (*Memory, error) {
	if svc == nil {
		return nil, invalid(opNewMemory, "svc", "service must not be nil")
	}
	o := memoryOptions{prefix: "lock/", purpose: lease.Operation}
	for _, opt := range opts {
		if opt == nil {
			o.refuse("MemoryOption", "option must not be nil")
			continue
		}
		opt.applyMemory(&o)
	}
	if o.bad != nil {
		return nil, o.bad
	}
	return &Memory{svc: svc, locks: keylock.New(keylock.Config{
		Backend: svc,
		Clock:   svc.Clock(),
		Done:    svc.Done(),
		Package: "lock",
		Prefix:  o.prefix,
		Purpose: o.purpose,
		Delay:   o.delay,
	})}, nil
}

const opNewMemory = "NewMemory"

// Clock returns the time base the Memory's locks expire on: its service's
// Clock. It makes Memory a lockprovider.TimeBase, so a Manager over it counts on the
// service's time.
func (m *Memory) Clock() lease.Clock { return m.svc.Clock() }

// Acquire grants a lease of d to executionID and attaches the lock's key to
// it, only if the key is absent; a held lock gets nil, nil. With a
// lock-delay, a name whose last lease expired (rather than being released)
// less than the delay ago also gets nil, nil.
func (m *Memory) Acquire(ctx context.Context, name, executionID string, d time.Duration) (*Lease, error) {
	return m.AcquireValue(ctx, name, executionID, d, nil)
}

// AcquireValue is Acquire that also stores value (a copy) with the
// holding, for Holder and Held to report; it makes Memory a
// lockprovider.ValueAcquirer.
// A value longer than MaxValueSize is refused with an error matching
// lease.ErrInvalidArgument.
func (m *Memory) AcquireValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error) {
	if err := lockprovider.CheckAcquire(ctx, name, executionID, d); err != nil {
		return nil, err
	}
	if err := lockprovider.CheckValue(value); err != nil {
		return nil, err
	}
	l, err := m.locks.Acquire(ctx, name, executionID, d, value)
	return (*Lease)(l), err
}

// Renew extends the given leases that still hold their locks to now+d and
// returns them, in input order. An error (a cancelled context, a closed
// service, d outside the service's TTL bounds) stops it; the leases renewed
// before it are returned with it. On a closed service it fails with an
// error matching lease.ErrClosed, whatever the leases: a closed service
// cannot say whether they are held.
func (m *Memory) Renew(ctx context.Context, leases []Lease, d time.Duration) ([]Lease, error) {
	if err := lockprovider.CheckRenew(ctx, leases, d); err != nil {
		return nil, err
	}
	got, err := m.locks.Renew(ctx, keylock.ToLeases(leases), d)
	return keylock.FromLeases[Lease](got), err
}

// Release revokes the leases of the given locks that are still held by them.
// Leases that are released, expired, unknown or superseded are skipped. An
// error (a cancelled context, a closed service) stops it. On a closed
// service it fails with an error matching lease.ErrClosed, whatever the
// leases: nothing can be released there.
func (m *Memory) Release(ctx context.Context, leases []Lease) error {
	if err := lockprovider.CheckRelease(ctx, leases); err != nil {
		return err
	}
	return m.locks.Release(ctx, keylock.ToLeases(leases))
}
