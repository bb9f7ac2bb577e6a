package lock

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasehold/lease"
)

// Memory is the in-process Provider. Each lock is a key (the prefix, "lock/"
// by default, then the name) attached to a lease of a lease.Service, held by
// the executionID, whose value is the executionID. The service is the only
// record of who holds what: an expiring lease deletes its key, and so frees
// the lock, atomically.
//
// The fencing token is the lease's ID: the service issues IDs in increasing
// order and never reuses one, so tokens grow across expiry and take-over,
// and an ID names exactly one grant, which makes Renew and Release by ID
// immune to a take-over racing them.
//
// Locks must be renewed and released only through the Memory (or a Manager
// on it); use one Memory per service and key prefix. A Memory is safe for
// concurrent use.
type Memory struct {
	svc     *lease.Service
	prefix  string
	purpose lease.Purpose

	// Only with a lock-delay: mu serialises the operations that read or
	// change the expiry records.
	delay time.Duration
	mu    sync.Mutex
	ended delayRecord
}

// NewMemory returns a Memory storing its locks in svc. It panics if svc is
// nil.
func NewMemory(svc *lease.Service, opts ...MemoryOption) *Memory {
	if svc == nil {
		panic("lock: NewMemory: nil service")
	}
	o := memoryOptions{prefix: "lock/", purpose: lease.Operation}
	for _, opt := range opts {
		opt.applyMemory(&o)
	}
	return &Memory{
		svc:     svc,
		prefix:  o.prefix,
		purpose: o.purpose,
		delay:   o.delay,
		ended:   newDelayRecord(),
	}
}

// Clock returns the time base the Memory's locks expire on: its service's
// Clock. It makes Memory a TimeBase, so a Manager over it counts on the
// service's time.
func (m *Memory) Clock() lease.Clock { return m.svc.Clock() }

// Acquire grants a lease of d to executionID and attaches the lock's key to
// it, only if the key is absent; a held lock gets nil, nil. With a
// lock-delay, a name whose last lease expired (rather than being released)
// less than the delay ago also gets nil, nil.
func (m *Memory) Acquire(ctx context.Context, name, executionID string, d time.Duration) (*Lease, error) {
	if err := CheckAcquire(ctx, name, executionID, d); err != nil {
		return nil, err
	}
	if m.delay <= 0 {
		return m.grant(ctx, name, executionID, d)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.svc.Clock().Now()
	if m.delayed(name, now) {
		return nil, nil
	}
	l, err := m.grant(ctx, name, executionID, d)
	if l != nil {
		m.ended.held(name, lease.ID(l.Token), l.ExpiresAt, now, m.delay)
	}
	return l, err
}

// delayed reports whether name is in its lock-delay at now. The service
// settles expiries on every call, so asking it about the last holder's lease
// sees an expiry that nobody has observed yet: there is no window between
// an expiry and its delay.
func (m *Memory) delayed(name string, now time.Time) bool {
	r, ok := m.ended.get(name)
	if !ok {
		return false
	}
	_, err := m.svc.Info(r.id)
	switch {
	case err == nil:
		return false // still held: the grant reports contention
	case errors.Is(err, lease.ErrExpired) && now.Before(r.expiresAt.Add(m.delay)):
		return true
	}
	m.ended.forget(name, r.id)
	return false
}

func (m *Memory) grant(ctx context.Context, name, executionID string, d time.Duration) (*Lease, error) {
	l, err := m.svc.GrantWithKey(ctx, executionID, m.purpose, d, m.prefix+name, []byte(executionID))
	if err != nil {
		if errors.Is(err, lease.ErrKeyExists) {
			return nil, nil
		}
		return nil, err
	}
	return &Lease{Name: name, ExecutionID: executionID, ExpiresAt: l.ExpiresAt, Token: uint64(l.ID)}, nil
}

// Renew extends the given leases that still hold their locks to now+d and
// returns them, in input order. An error (a cancelled context, a closed
// service, d outside the service's TTL bounds) stops it; the leases renewed
// before it are returned with it.
func (m *Memory) Renew(ctx context.Context, leases []Lease, d time.Duration) ([]Lease, error) {
	if err := CheckRenew(ctx, leases, d); err != nil {
		return nil, err
	}
	if m.delay > 0 {
		m.mu.Lock()
		defer m.mu.Unlock()
	}
	var out []Lease
	for _, l := range leases {
		id, ok := m.holding(l)
		if !ok {
			continue
		}
		got, err := m.svc.RenewTTL(ctx, id, d)
		if ended(err) {
			continue
		}
		if err != nil {
			return out, err
		}
		l.ExpiresAt = got.ExpiresAt
		out = append(out, l)
		if m.delay > 0 {
			m.ended.held(l.Name, id, got.ExpiresAt, got.RenewedAt, m.delay)
		}
	}
	return out, nil
}

// Release revokes the leases of the given locks that are still held by them.
// Leases that are released, expired, unknown or superseded are skipped. An
// error (a cancelled context, a closed service) stops it.
func (m *Memory) Release(ctx context.Context, leases []Lease) error {
	if err := CheckRelease(ctx, leases); err != nil {
		return err
	}
	if m.delay > 0 {
		m.mu.Lock()
		defer m.mu.Unlock()
	}
	for _, l := range leases {
		id, ok := m.holding(l)
		if !ok {
			continue
		}
		if _, err := m.svc.Revoke(ctx, id); err != nil && !ended(err) {
			return err
		}
		if m.delay > 0 {
			m.ended.forget(l.Name, id) // a clean release has no delay
		}
	}
	return nil
}

// holding returns the lease ID holding l's lock if it is l's: the key is
// attached to the lease whose ID is l's token and its value is l's
// executionID. The ID names one grant, so acting on it later is safe even if
// the lock changes hands meanwhile: the act fails on the ended lease.
func (m *Memory) holding(l Lease) (lease.ID, bool) {
	value, id, ok := m.svc.Get(m.prefix + l.Name)
	if !ok || id == 0 || uint64(id) != l.Token || string(value) != l.ExecutionID {
		return 0, false
	}
	return id, true
}

// ended reports whether err says the lease is no longer active, which
// Renew and Release skip silently.
func ended(err error) bool {
	return errors.Is(err, lease.ErrExpired) || errors.Is(err, lease.ErrAlreadyRevoked) || errors.Is(err, lease.ErrNotFound)
}
