package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/optcore"
	"github.com/leasehold/lease/internal/renewal"
	"github.com/leasehold/lease/internal/sharedopt"
	"github.com/leasehold/lease/lock/lockprovider"
)

// Manager runs functions under locks of a Provider, holding them as one
// executionID: it acquires, renews in the background while the function
// runs, and releases when it returns.
//
// A Manager starts no goroutine of its own: renewals run as callbacks of
// its clock (its provider's time base, or the clock of lease.WithClock), so with
// a leasetest.FakeClock they run inside Advance, and no callback outlives
// the TryLock or Do that armed it.
//
// A Manager is safe for concurrent use; its functions, callbacks and
// provider may call back into it.
type Manager struct {
	provider Provider
	opts     managerOptions
}

// NewManager returns a Manager over provider, or an error for a
// configuration that cannot work: a *lease.Error with Code
// lease.CodeInvalidArgument whose Field names the argument or the option at
// fault (such as "WithSafetyMargin") and whose Detail gives the rule and the
// values. It refuses
//
//   - a nil provider;
//   - lease.WithClock for a provider that has its own time base (a lockprovider.TimeBase,
//     such as Memory): the Manager must count on the time the leases
//     expire on, not on a second clock;
//   - a lease so short that its renewal interval, a third of it, rounds to
//     zero (WithLeaseDuration);
//   - a safety margin that is not shorter than what is left of the lease
//     at its first renewal, duration - duration/3, which would give a
//     healthy lock up there (WithSafetyMargin);
//   - a value (WithValue) longer than MaxValueSize, or for a provider that
//     cannot store one (not a lockprovider.ValueAcquirer);
//   - a retry interval that is not shorter than the time from the first
//     renewal to the safety deadline, duration - duration/3 - margin, so
//     that a failed renewal could never be retried (WithRetryInterval).
//
// It refuses too the values no option can take (a duration that is not
// positive, an empty execution ID, a nil clock or function), naming the
// first such option: option constructors never panic.
func NewManager(provider Provider, opts ...Option) (*Manager, error) {
	if provider == nil {
		return nil, invalid(opNewManager, "provider", "must not be nil")
	}
	o := managerOptions{duration: DefaultLeaseDuration, margin: -1}
	if r := optcore.Apply(&sharedopt.Target{Shared: &o.shared, Own: &o}, opts, Option.ApplyLock); r != nil {
		return nil, invalid(opNewManager, r.Option, r.Detail)
	}
	clock, err := managerClock(provider, o.shared.Clock)
	if err != nil {
		return nil, err
	}
	o.clock = clock
	o.report = sharedopt.Reporter(&o.shared)
	if o.margin < 0 {
		o.margin = renewal.DefaultMargin(o.duration) // always fits: Validate checks it all the same
	}
	retryNote := ""
	if o.retry == 0 {
		o.retry = renewal.DefaultRetry(o.duration)
		retryNote = "; that is the default retry interval, a tenth of the lease duration: set a shorter one"
	}
	if bad := renewal.Validate(o.duration, o.margin, o.retry); bad != nil {
		detail := bad.Detail
		if bad.Param == renewal.ParamRetry {
			detail += retryNote
		}
		return nil, invalid(opNewManager, optionOf[bad.Param], detail)
	}
	if o.value != nil {
		if _, ok := provider.(lockprovider.ValueAcquirer); !ok {
			return nil, invalid(opNewManager, "WithValue", "the provider cannot store a value: it does not implement lockprovider.ValueAcquirer")
		}
		if len(o.value) > MaxValueSize {
			return nil, invalid(opNewManager, "WithValue", strconv.Itoa(len(o.value))+" bytes is more than MaxValueSize ("+strconv.Itoa(MaxValueSize)+")")
		}
	}
	if o.executionID == "" {
		o.executionID = randomID()
	}
	return &Manager{provider: provider, opts: o}, nil
}

const opNewManager = "NewManager"

// managerClock returns the clock a Manager over p times its renewals on:
// p's time base if it has one, and otherwise a never-backwards view of the
// clock given with lease.WithClock (nil if none was), by default the system's.
func managerClock(p Provider, given lease.Clock) (lease.Clock, error) {
	tb, ok := p.(lockprovider.TimeBase)
	switch {
	case ok && given != nil:
		return nil, invalid(opNewManager, "WithClock",
			"the provider has its own time base (it implements lockprovider.TimeBase, as Memory does), which the Manager reads; a second clock would disagree with it")
	case ok:
		c := tb.Clock()
		if c == nil {
			return nil, invalid(opNewManager, "provider", "its Clock (TimeBase) returned nil")
		}
		return c, nil
	case given == nil:
		given = lease.SystemClock()
	}
	return lease.MonotonicClock(given), nil
}

// optionOf names the option that sets each parameter of the schedule.
var optionOf = [...]string{
	renewal.ParamDuration: "WithLeaseDuration",
	renewal.ParamMargin:   "WithSafetyMargin",
	renewal.ParamRetry:    "WithRetryInterval",
}

// reportPanic reports a panic recovered from a callback to the panic
// handler.
func (m *Manager) reportPanic(name string, value any, stack []byte) {
	m.opts.report(name, value, stack)
}

// ExecutionID returns the executionID the Manager holds locks as.
func (m *Manager) ExecutionID() string { return m.opts.executionID }

// Result is the outcome of Do: whether the lock was acquired (and so fn
// ran) and the value fn returned. It is a plain value.
type Result[T any] struct {
	Acquired bool
	Value    T
}

// TryLock runs fn while holding the lock name, if it can be acquired now.
// If the lock is held, it returns false, nil without calling fn; see Do for
// the rest.
func (m *Manager) TryLock(ctx context.Context, name string, fn func(ctx context.Context, l Lease) error) (acquired bool, err error) {
	if fn == nil {
		return false, invalid("trylock", "fn", "must not be nil")
	}
	r, err := Do(ctx, m, name, func(ctx context.Context, l Lease) (struct{}, error) {
		return struct{}{}, fn(ctx, l)
	})
	return r.Acquired, err
}

// Do runs fn while holding the lock name, if it can be acquired now, and
// returns what fn returned with Acquired true. If the lock is held it
// returns a zero Result and nil without calling fn; if acquiring fails, the
// provider's error.
//
// While fn runs the lease is renewed every third of the lease duration; a
// renewal that fails with an error is retried while a retry can land before
// the safety deadline. fn's context is cancelled, with context.Cause
// ErrLockLost, as soon as a renewal shows the lock lost (it does not return
// the lease, or the provider says lease.ErrClosed) and at the latest the
// safety margin before the last confirmed expiry, which is counted on the
// Manager's clock from when the confirming call was sent, never from the
// provider's clock. fn must stop using the resource
// then; a Fence on the resource catches it if it does not. If the lock was
// lost while fn ran, the error returned matches ErrLockLost even if fn
// returned nil.
//
// When fn returns or panics, renewal stops and the lock is released (the
// panic then continues). A lease so slow to acquire that it is already past
// its safety deadline is released without calling fn, and Do returns
// ErrLockLost with Acquired false.
func Do[T any](ctx context.Context, m *Manager, name string, fn func(ctx context.Context, l Lease) (T, error)) (Result[T], error) {
	return run(ctx, m, "do", name, false, fn)
}

// Lock runs fn while holding the lock name, waiting until it can be
// acquired or ctx is done; see DoWait.
func (m *Manager) Lock(ctx context.Context, name string, fn func(ctx context.Context, l Lease) error) error {
	if fn == nil {
		return invalid("lock", "fn", "must not be nil")
	}
	_, err := DoWait(ctx, m, name, func(ctx context.Context, l Lease) (struct{}, error) {
		return struct{}{}, fn(ctx, l)
	})
	return err
}

// DoWait is Do that waits for the lock: it returns once fn has run under
// the lock, with Acquired true and what fn returned, or when ctx is done
// first, with a zero Result and ctx.Err(), holding nothing. Once acquired,
// the lock is renewed, lost and released exactly as in Do.
//
// Over a provider that is a lockprovider.Waiter (Memory, and the PostgreSQL and etcd
// providers) the wait is woken by the lock's release or expiry, or the end
// of its lock-delay, and the provider's waiters are served first come,
// first served. Over another provider the Manager tries again every
// lockprovider.PollInterval of its lease duration (a tenth, at least
// 10 ms), timed on its clock.
func DoWait[T any](ctx context.Context, m *Manager, name string, fn func(ctx context.Context, l Lease) (T, error)) (Result[T], error) {
	return run(ctx, m, "lock", name, true, fn)
}

// run is Do, or DoWait if wait.
func run[T any](ctx context.Context, m *Manager, op, name string, wait bool, fn func(ctx context.Context, l Lease) (T, error)) (Result[T], error) {
	var none Result[T]
	if fn == nil {
		return none, invalid(op, "fn", "must not be nil")
	}
	acquire := m.acquire
	if wait {
		acquire = m.acquireWait
	}
	begun := m.observeBegin()
	l, sent, err := acquire(ctx, name)
	if err != nil || l == nil {
		return none, err
	}
	ctx, observed := m.observeAcquired(ctx, *l, begun)
	h := m.hold(ctx, *l, sent, observed)
	defer h.finish()
	if h.loop.Err() != nil {
		return none, ErrLockLost
	}
	v, err := fn(h.loop.Context(), *l)
	return Result[T]{Acquired: true, Value: v}, h.outcome(err)
}

// acquire tries once to acquire name, and returns the lease (nil if the
// lock is held) with the instant the successful call was sent.
func (m *Manager) acquire(ctx context.Context, name string) (*Lease, time.Time, error) {
	sent := m.opts.clock.Now()
	var l *Lease
	var err error
	if va, ok := m.provider.(lockprovider.ValueAcquirer); ok && m.opts.value != nil {
		l, err = va.AcquireValue(ctx, name, m.opts.executionID, m.opts.duration, m.opts.value)
	} else {
		l, err = m.provider.Acquire(ctx, name, m.opts.executionID, m.opts.duration)
	}
	return l, sent, err
}

// acquireWait acquires name, waiting for it until ctx is done, and returns
// the lease with the instant its lifetime counts from on the Manager's
// clock.
func (m *Manager) acquireWait(ctx context.Context, name string) (*Lease, time.Time, error) {
	var wait func() (*Lease, error)
	switch w := m.provider.(type) {
	case lockprovider.ValueWaiter:
		wait = func() (*Lease, error) {
			return w.AcquireWaitValue(ctx, name, m.opts.executionID, m.opts.duration, m.opts.value)
		}
	case lockprovider.Waiter:
		if m.opts.value != nil { // it cannot wait with the value: poll
			return m.poll(ctx, name)
		}
		wait = func() (*Lease, error) { return w.AcquireWait(ctx, name, m.opts.executionID, m.opts.duration) }
	default:
		return m.poll(ctx, name)
	}
	start := m.opts.clock.Now()
	l, err := wait()
	if err != nil {
		return nil, time.Time{}, err
	}
	if l == nil { // a broken Waiter: never run fn without a lease
		return nil, time.Time{}, errNoLease
	}
	if _, ok := m.provider.(lockprovider.TimeBase); ok {
		// Granted at ExpiresAt - d on the Manager's own clock, and not
		// before the call was made.
		return l, later(start, l.ExpiresAt.Add(-m.opts.duration)), nil
	}
	// Nothing says when it was granted on our clock: confirm it.
	sent := m.opts.clock.Now()
	got, err := m.provider.Renew(ctx, []Lease{*l}, m.opts.duration)
	if err == nil && (len(got) != 1 || got[0].Token != l.Token) {
		err = ErrLockLost
	}
	if err != nil {
		// ctx may be done: give the release a bounded context of its own.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), giveUpReleaseTimeout)
		defer cancel()
		_ = m.provider.Release(rctx, []Lease{*l})
		return nil, time.Time{}, err
	}
	return &got[0], sent, nil
}

// giveUpReleaseTimeout bounds the release of a lease that a waiting call
// got but will not use, after its caller's context ended.
const giveUpReleaseTimeout = 5 * time.Second

// poll acquires name by trying every lockprovider.PollInterval, for a provider that is
// not a lockprovider.Waiter.
func (m *Manager) poll(ctx context.Context, name string) (*Lease, time.Time, error) {
	wake := make(chan struct{}, 1)
	for {
		l, sent, err := m.acquire(ctx, name)
		if err != nil || l != nil {
			return l, sent, err
		}
		t := m.opts.clock.AfterFunc(lockprovider.PollInterval(m.opts.duration), func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
		select {
		case <-wake:
		case <-ctx.Done():
			t.Stop()
			return nil, time.Time{}, ctx.Err()
		}
	}
}

var errNoLease = providerFault("acquire", "the provider's AcquireWait returned neither a lease nor an error")

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}

// lostError joins ErrLockLost to fn's error unless it already says so.
func lostError(err error) error {
	switch {
	case err == nil:
		return ErrLockLost
	case errors.Is(err, ErrLockLost):
		return err
	}
	return errors.Join(err, ErrLockLost)
}
