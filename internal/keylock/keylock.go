// Package keylock keeps named locks as keys of a lease.Backend: the logic
// of lock.Memory, shared with the lock provider of a replicated node.
//
// Each lock is a key (a prefix, then the name) attached to a lease, granted
// with the key in one call only if the key is absent; the key's value
// encodes the holder's execution ID and value, and the lock's fencing token
// is the lease's ID, which the backend issues in increasing order and never
// reuses. The backend is the only record of who holds what: an expiring
// lease deletes its key, and so frees the lock, atomically.
//
// Inputs are checked by the callers (package lock's Check functions), which
// also convert these types to their own.
package keylock

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasehold/lease"
)

// Lease, Holding and Waiting have the fields of lock.Lease, lock.Holding
// and lock.Waiting, so that the callers convert them with a conversion.
type (
	Lease struct {
		Name        string
		ExecutionID string
		ExpiresAt   time.Time
		Token       uint64
	}
	Holding struct {
		Name        string
		ExecutionID string
		Token       uint64
		ExpiresAt   time.Time
		Value       []byte
	}
	Waiting struct {
		ExecutionID string
		Since       time.Time
	}
)

// Config is what Locks run on.
type Config struct {
	// Backend holds the locks.
	Backend lease.Backend
	// Clock gives the waiters' Since and arms their timers. With a Delay it
	// must be the backend's time base, which its leases expire on.
	Clock lease.Clock
	// Done is closed when the backend is closed: waits end then.
	Done <-chan struct{}
	// Package names the package in the errors ("lock", "replicated").
	Package string
	Prefix  string
	Purpose lease.Purpose
	// Delay is the lock-delay; 0 for none.
	Delay time.Duration
	// Recheck, when positive, is how long the first waiter of a lock waits
	// for a wake-up before it tries again anyway: for a backend whose OnEnd
	// can miss an ending. 0 trusts OnEnd.
	Recheck time.Duration
}

// Locks keep locks in a backend. They are safe for concurrent use, and hold
// no lock of their own while they call the backend, so the backend's
// notifications may call back into them.
type Locks struct {
	b       lease.Backend
	clock   lease.Clock
	done    <-chan struct{}
	pkg     string
	prefix  string
	purpose lease.Purpose
	recheck time.Duration

	// Only with a lock-delay: the record of the leases that held each name,
	// guarded by mu. mu is never held across a call into the backend, whose
	// notifications run user code that may call back into the Locks.
	delay time.Duration
	mu    sync.Mutex
	ended delayRecord

	// The callers of AcquireWait, queued per name; see wait.go.
	waits waitQueues
}

// New returns Locks on cfg.
func New(cfg Config) *Locks {
	return &Locks{
		b:       cfg.Backend,
		clock:   cfg.Clock,
		done:    cfg.Done,
		pkg:     cfg.Package,
		prefix:  cfg.Prefix,
		purpose: cfg.Purpose,
		recheck: cfg.Recheck,
		delay:   cfg.Delay,
		ended:   newDelayRecord(),
		waits:   newWaitQueues(),
	}
}

// Acquire grants a lease of d to executionID with the lock's key attached,
// only if the key is absent; a held lock gets nil, nil. With a lock-delay,
// a name whose last lease expired (rather than being released) less than
// the delay ago also gets nil, nil.
func (m *Locks) Acquire(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error) {
	if m.delay <= 0 {
		l, _, err := m.grant(ctx, name, executionID, d, value)
		return l, err
	}
	// Ask first, so that a lock in its delay is refused without a grant.
	now := m.clock.Now()
	if delayed, err := m.delayed(ctx, name, now); delayed || err != nil {
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
	delayed, err := m.delayed(ctx, name, at)
	if delayed || err != nil {
		// Hand the grant back: a revoked lease leaves no delay, and the
		// record still names the lease whose delay runs.
		if _, rerr := m.b.Revoke(context.WithoutCancel(ctx), lease.ID(l.Token)); rerr != nil && !ended(rerr) {
			err = m.voice("acquire", rerr)
		}
		m.waits.wake(name) // the grant may have kept a waiter's attempt out
		return nil, err
	}
	m.mu.Lock()
	m.ended.held(name, lease.ID(l.Token), l.ExpiresAt, at, m.delay)
	m.mu.Unlock()
	return l, nil
}

// delayed reports whether name is in its lock-delay at the instant at on
// the backend's time: the lease last recorded holding it expired (rather
// than being revoked) less than the delay before at. The backend settles
// expiries on every call, so asking it about that lease sees an expiry
// that nobody has observed yet: there is no window between an expiry and
// its delay.
//
// While a call that may have extended a lease of the name is under way,
// the recorded expiry may be behind the backend's; if that call could have
// set an expiry at or before at, the answer is yes, to be safe, until it
// has recorded what it learnt. It is called without mu held.
func (m *Locks) delayed(ctx context.Context, name string, at time.Time) (bool, error) {
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
		_, err := m.b.Info(ctx, r.id)
		switch {
		case err == nil:
			return false, nil // still held: the grant reports contention
		case errors.Is(err, lease.ErrExpired):
			return true, nil
		case !ended(err):
			return false, m.voice("acquire", err)
		}
	}
	// Released, or its delay is over: the record has served.
	m.mu.Lock()
	m.ended.forget(name, r.id)
	m.mu.Unlock()
	return false, nil
}

// grant grants the lock's lease if its key is absent, and returns it with
// the instant of the grant on the backend's time; contention is nil, nil.
func (m *Locks) grant(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, time.Time, error) {
	l, err := m.b.GrantWithKey(ctx, executionID, m.purpose, d, m.prefix+name, encodeValue(executionID, value))
	if err != nil {
		if errors.Is(err, lease.ErrKeyExists) {
			return nil, time.Time{}, nil
		}
		return nil, time.Time{}, m.voice("acquire", err)
	}
	return &Lease{Name: name, ExecutionID: executionID, ExpiresAt: l.ExpiresAt, Token: uint64(l.ID)}, l.GrantedAt, nil
}

// Renew extends the given leases that still hold their locks to now+d and
// returns them, in input order. An error stops it; the leases renewed
// before it are returned with it. On a closed backend it fails with an
// error matching lease.ErrClosed, whatever the leases.
func (m *Locks) Renew(ctx context.Context, leases []Lease, d time.Duration) ([]Lease, error) {
	const op = "renew"
	if err := m.open(op); err != nil {
		return nil, err
	}
	var out []Lease
	for _, l := range leases {
		id, ok, err := m.holding(ctx, op, l)
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
			return out, m.voice(op, err)
		}
		l.ExpiresAt = got.ExpiresAt
		out = append(out, l)
	}
	return out, nil
}

// renew renews lease id of the lock name for d. With a lock-delay the call
// is counted as under way until its answer is recorded.
func (m *Locks) renew(ctx context.Context, name string, id lease.ID, d time.Duration) (lease.Lease, error) {
	if m.delay <= 0 {
		return m.b.RenewTTL(ctx, id, d)
	}
	sent := m.clock.Now()
	m.mu.Lock()
	m.ended.begin(name, sent.Add(d))
	m.mu.Unlock()
	got, err := m.b.RenewTTL(ctx, id, d)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		m.ended.held(name, id, got.ExpiresAt, got.RenewedAt, m.delay) // before end: it reads crowded
	}
	m.ended.end(name)
	return got, err
}

// Release revokes the leases of the given locks that are still held by
// them, and skips the rest. An error stops it. On a closed backend it fails
// with an error matching lease.ErrClosed, whatever the leases.
func (m *Locks) Release(ctx context.Context, leases []Lease) error {
	const op = "release"
	if err := m.open(op); err != nil {
		return err
	}
	for _, l := range leases {
		id, ok, err := m.holding(ctx, op, l)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		_, err = m.b.Revoke(ctx, id)
		if err != nil && !ended(err) {
			return m.voice(op, err)
		}
		if err == nil {
			// Offer the lock to a waiter now rather than when the
			// backend delivers the ending, which a slow subscriber (or,
			// on a replica, a slow apply) can hold up.
			m.waits.wake(l.Name)
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
// executionID. The ID names one grant, so acting on it later is safe even
// if the lock changes hands meanwhile: the act fails on the ended lease.
func (m *Locks) holding(ctx context.Context, op string, l Lease) (lease.ID, bool, error) {
	value, id, ok, err := m.b.Get(ctx, m.prefix+l.Name)
	if err != nil {
		return 0, false, m.voice(op, err)
	}
	if !ok || id == 0 || uint64(id) != l.Token {
		return 0, false, nil
	}
	if exec, _, ok := decodeValue(value); !ok || exec != l.ExecutionID {
		return 0, false, nil
	}
	return id, true, nil
}

// open returns the error of op on a closed backend, nil while it is open.
func (m *Locks) open(op string) error {
	select {
	case <-m.done:
		return m.closed(op)
	default:
		return nil
	}
}

func (m *Locks) closed(op string) error {
	return &lease.Error{Package: m.pkg, Code: lease.CodeClosed, Op: op}
}

// voice gives an error of the backend the Locks' voice: a copy naming
// their package and op. Other errors (a context's, a network's) pass
// unchanged.
func (m *Locks) voice(op string, err error) error {
	var le *lease.Error
	if !errors.As(err, &le) {
		return err
	}
	c := *le
	c.Package, c.Op = m.pkg, op
	return &c
}

// ended reports whether err says the lease is no longer active, which
// Renew and Release skip silently.
func ended(err error) bool {
	return errors.Is(err, lease.ErrExpired) || errors.Is(err, lease.ErrAlreadyRevoked) || errors.Is(err, lease.ErrNotFound)
}
