package lock

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/lockkit"
)

// Memory is the in-process Provider. Each lock is a key (the prefix, "lock/"
// by default, then the name) attached to a lease of a lease.Service, held by
// the executionID, whose value encodes the executionID and the value the
// holder attached (AcquireValue). The service is the only record of who
// holds what: an expiring lease deletes its key, and so frees the lock,
// atomically. Callers of AcquireWait queue per name and are woken when the
// lock is freed (Waiter).
//
// The fencing token is the lease's ID: the service issues IDs in increasing
// order and never reuses one, so tokens grow across expiry and take-over,
// and an ID names exactly one grant, which makes Renew and Release by ID
// immune to a take-over racing them.
//
// A Memory reads time only from its service (its Clock), and is a TimeBase
// for a Manager over it. Once the service is closed, Acquire, Renew and
// Release fail with an error matching lease.ErrClosed.
//
// Locks must be renewed and released only through the Memory (or a Manager
// on it); use one Memory per service and key prefix. A Memory is safe for
// concurrent use, and holds no lock of its own while it calls the service,
// so the service's notifications may call back into it.
type Memory struct {
	svc     *lease.Service
	prefix  string
	purpose lease.Purpose

	// Only with a lock-delay: the record of the leases that held each name,
	// guarded by mu. mu is never held across a call into the service, whose
	// notifications run user code that may call back into the Memory.
	delay time.Duration
	mu    sync.Mutex
	ended delayRecord

	// The callers of AcquireWait, queued per name; see wait.go.
	waits waitQueues
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
	return &Memory{
		svc:     svc,
		prefix:  o.prefix,
		purpose: o.purpose,
		delay:   o.delay,
		ended:   newDelayRecord(),
		waits:   newWaitQueues(),
	}, nil
}

const opNewMemory = "NewMemory"

// Clock returns the time base the Memory's locks expire on: its service's
// Clock. It makes Memory a TimeBase, so a Manager over it counts on the
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
// holding, for Holder and Held to report; it makes Memory a ValueAcquirer.
// A value longer than MaxValueSize is refused with an error matching
// lease.ErrInvalidArgument.
func (m *Memory) AcquireValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error) {
	if err := lockkit.CheckAcquire(ctx, name, executionID, d); err != nil {
		return nil, err
	}
	if err := lockkit.CheckValue(value, MaxValueSize); err != nil {
		return nil, err
	}
	return m.acquire(ctx, name, executionID, d, value)
}

// acquire is AcquireValue on checked input.
func (m *Memory) acquire(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error) {
	if m.delay <= 0 {
		l, _, err := m.grant(ctx, name, executionID, d, value)
		return l, err
	}
	// Ask first, so that a lock in its delay is refused without a grant.
	now := m.svc.Clock().Now()
	if delayed, err := m.delayed(name, now); delayed || err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.ended.begin(name, now.Add(d))
	m.mu.Unlock()
	l, at, err := m.grant(ctx, name, executionID, d, value)
	m.mu.Lock()
	m.ended.end(name)
	m.mu.Unlock()
	if l == nil {
		return nil, err
	}
	// Ask again, as of the grant: the last holder's lease may have expired
	// between the first answer and the grant. Holding the key, we are the
	// only one asking.
	delayed, err := m.delayed(name, at)
	if delayed || err != nil {
		// Hand the grant back: a revoked lease leaves no delay, and the
		// record still names the lease whose delay runs.
		if _, rerr := m.svc.Revoke(context.WithoutCancel(ctx), lease.ID(l.Token)); rerr != nil && !ended(rerr) {
			err = rerr
		}
		m.wake(name) // the grant may have kept a waiter's attempt out
		return nil, err
	}
	m.mu.Lock()
	m.ended.held(name, lease.ID(l.Token), l.ExpiresAt, at, m.delay)
	m.mu.Unlock()
	return l, nil
}

// delayed reports whether name is in its lock-delay at the instant at on
// the service's time: the lease last recorded holding it expired (rather
// than being revoked) less than the delay before at. The service settles
// expiries on every call, so asking it about that lease sees an expiry
// that nobody has observed yet: there is no window between an expiry and
// its delay.
//
// While a call that may have extended a lease of the name is under way,
// the recorded expiry may be behind the service's; if that call could have
// set an expiry at or before at, the answer is yes, to be safe, until it
// has recorded what it learnt. It is called without mu held.
func (m *Memory) delayed(name string, at time.Time) (bool, error) {
	m.mu.Lock()
	r := m.ended.get(name)
	m.mu.Unlock()
	if r.underWay > 0 && !at.Before(r.earliest) {
		return true, nil
	}
	if r.id == 0 {
		return false, nil
	}
	if at.Before(r.expiresAt.Add(m.delay)) {
		_, err := m.svc.Info(r.id)
		switch {
		case err == nil:
			return false, nil // still held: the grant reports contention
		case errors.Is(err, lease.ErrExpired):
			return true, nil
		case errors.Is(err, lease.ErrClosed):
			return false, fromService("acquire", err)
		}
	}
	// Released, or its delay is over: the record has served.
	m.mu.Lock()
	m.ended.forget(name, r.id)
	m.mu.Unlock()
	return false, nil
}

// grant grants the lock's lease if its key is absent, and returns it with
// the instant of the grant on the service's time; contention is nil, nil.
func (m *Memory) grant(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, time.Time, error) {
	l, err := m.svc.GrantWithKey(ctx, executionID, m.purpose, d, m.prefix+name, encodeValue(executionID, value))
	if err != nil {
		if errors.Is(err, lease.ErrKeyExists) {
			return nil, time.Time{}, nil
		}
		return nil, time.Time{}, fromService("acquire", err)
	}
	return &Lease{Name: name, ExecutionID: executionID, ExpiresAt: l.ExpiresAt, Token: uint64(l.ID)}, l.GrantedAt, nil
}

// Renew extends the given leases that still hold their locks to now+d and
// returns them, in input order. An error (a cancelled context, a closed
// service, d outside the service's TTL bounds) stops it; the leases renewed
// before it are returned with it. On a closed service it fails with an
// error matching lease.ErrClosed, whatever the leases: a closed service
// cannot say whether they are held.
func (m *Memory) Renew(ctx context.Context, leases []Lease, d time.Duration) ([]Lease, error) {
	const op = "renew"
	if err := checkRenew(ctx, leases, d); err != nil {
		return nil, err
	}
	if err := m.open(op); err != nil {
		return nil, err
	}
	var out []Lease
	for _, l := range leases {
		id, ok, err := m.holding(op, l)
		if err != nil {
			return out, err
		}
		if !ok {
			continue
		}
		got, err := m.renew(ctx, l.Name, id, d)
		if ended(err) {
			continue
		}
		if err != nil {
			return out, fromService(op, err)
		}
		l.ExpiresAt = got.ExpiresAt
		out = append(out, l)
	}
	return out, nil
}

// renew renews lease id of the lock name for d. With a lock-delay the call
// is counted as under way until its answer is recorded.
func (m *Memory) renew(ctx context.Context, name string, id lease.ID, d time.Duration) (lease.Lease, error) {
	if m.delay <= 0 {
		return m.svc.RenewTTL(ctx, id, d)
	}
	sent := m.svc.Clock().Now()
	m.mu.Lock()
	m.ended.begin(name, sent.Add(d))
	m.mu.Unlock()
	got, err := m.svc.RenewTTL(ctx, id, d)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		m.ended.held(name, id, got.ExpiresAt, got.RenewedAt, m.delay) // before end: it reads crowded
	}
	m.ended.end(name)
	return got, err
}

// Release revokes the leases of the given locks that are still held by them.
// Leases that are released, expired, unknown or superseded are skipped. An
// error (a cancelled context, a closed service) stops it. On a closed
// service it fails with an error matching lease.ErrClosed, whatever the
// leases: nothing can be released there.
func (m *Memory) Release(ctx context.Context, leases []Lease) error {
	const op = "release"
	if err := checkRelease(ctx, leases); err != nil {
		return err
	}
	if err := m.open(op); err != nil {
		return err
	}
	for _, l := range leases {
		id, ok, err := m.holding(op, l)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		_, err = m.svc.Revoke(ctx, id)
		if err != nil && !ended(err) {
			return fromService(op, err)
		}
		if err == nil {
			// Offer the lock to a waiter now rather than when the
			// service delivers the ending, which a slow subscriber can
			// hold up.
			m.wake(l.Name)
		}
		if err == nil && m.delay > 0 {
			// A clean release has no delay. A lease that expired before
			// the revocation keeps its record: its delay runs.
			m.mu.Lock()
			m.ended.forget(l.Name, id)
			m.mu.Unlock()
		}
	}
	return nil
}

// holding returns the lease ID holding l's lock if it is l's: the key is
// attached to the lease whose ID is l's token and its value is l's
// executionID. The ID names one grant, so acting on it later is safe even if
// the lock changes hands meanwhile: the act fails on the ended lease. The
// service answers a lookup after Close as if the key were absent, so a miss
// is checked against Close.
func (m *Memory) holding(op string, l Lease) (lease.ID, bool, error) {
	value, id, ok := m.svc.Get(m.prefix + l.Name)
	if !ok {
		return 0, false, m.open(op)
	}
	if id == 0 || uint64(id) != l.Token {
		return 0, false, nil
	}
	if exec, _, ok := decodeValue(value); !ok || exec != l.ExecutionID {
		return 0, false, nil
	}
	return id, true, nil
}

// open returns the error of op on a closed service, nil while it is open.
func (m *Memory) open(op string) error {
	select {
	case <-m.svc.Done():
		return &lease.Error{Package: "lock", Code: lease.CodeClosed, Op: op}
	default:
		return nil
	}
}

// ended reports whether err says the lease is no longer active, which
// Renew and Release skip silently.
func ended(err error) bool {
	return errors.Is(err, lease.ErrExpired) || errors.Is(err, lease.ErrAlreadyRevoked) || errors.Is(err, lease.ErrNotFound)
}
