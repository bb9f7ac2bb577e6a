package lock

import (
	"context"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/callback"
	"github.com/leasehold/lease/internal/observers"
)

// EventKind says what an Event reports. It is a plain value, safe to
// share.
type EventKind uint8

// The kinds of Event.
const (
	// EventAcquired reports a lock acquired by TryLock, Lock, Do or
	// DoWait, with how long it was waited for.
	EventAcquired EventKind = iota + 1
	// EventRenewed reports a held lock renewed.
	EventRenewed
	// EventLost reports a lock lost while its function ran, as soon as
	// the Manager finds it lost (a renewal that did not return the lease,
	// or the safety deadline), while the function may still be running;
	// EventReleased follows once the function has returned.
	EventLost
	// EventReleased reports a lock released after its function returned
	// (a lost one too: the Manager releases it in case it is still held).
	EventReleased
)

// String returns the kind's name, such as "acquired".
func (k EventKind) String() string {
	switch k {
	case EventAcquired:
		return "acquired"
	case EventRenewed:
		return "renewed"
	case EventLost:
		return "lost"
	case EventReleased:
		return "released"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one thing an Observer is told about. It is a plain value, safe
// to copy and to keep.
type Event struct {
	Kind  EventKind
	Lease Lease // the holding, as last renewed
	// Wait is, for EventAcquired, the time from the start of the attempt
	// to the lock's acquisition on the Manager's clock: near zero for
	// TryLock, the wait for Lock.
	Wait time.Duration
	// Held is, for EventLost and EventReleased, how long the lock was
	// held, on the Manager's clock.
	Held time.Duration
	// Err is, for EventReleased, the provider's Release error, if any.
	Err error
}

// Observer receives a Manager's events: lease.Observer[Event], the
// module's one observer concept, under its rules. Observe is called on the
// goroutine of the TryLock or Lock call, or of the renewal (a clock
// callback), outside every lock, under the Manager's panic policy
// (reported as Callback "observer"); it must be safe for concurrent use.
// Nothing is queued, so nothing is buffered. lease.Observers shares one
// WithObserver between several observers.
type Observer = lease.Observer[Event]

// HoldTracer is implemented by an Observer that wraps each holding of a
// lock, for example in a trace span. TraceHold is called once the lock is
// acquired, before the function runs, and returns the context the holding
// and the function derive from and a function the Manager calls with the
// holding's outcome (ErrLockLost if the lock was lost, else the release
// error) once it is released. It must be safe for concurrent use; a panic
// in it is reported and the holding goes on untraced.
type HoldTracer interface {
	TraceHold(ctx context.Context, l Lease) (context.Context, func(err error))
}

// ObserverFunc adapts a function to an Observer: lease.ObserverFunc[Event].
// Like any func value it is safe to share; the function must be safe for
// concurrent use.
type ObserverFunc = lease.ObserverFunc[Event]

// WithObserver makes the Manager tell o about its events (see Observer);
// if o is also a HoldTracer, it wraps every holding, and so does every
// HoldTracer among the observers o joins if it was made by
// lease.Observers (each in its own context, the first outermost). Without
// it an event costs a nil check. NewManager returns an error if o is nil.
func WithObserver(o Observer) Option {
	return optionFunc(func(opts *managerOptions) {
		if observers.Set(opts.refuse, &opts.observer, o) {
			opts.tracers = observers.Find[HoldTracer](o)
		}
	})
}

// holdObserver is what a holding needs to report its end.
type holdObserver struct {
	acquired time.Time
	ends     []func(error) // the HoldTracers', in the order they began
}

// observeBegin returns the instant an acquisition starts, if observed.
func (m *Manager) observeBegin() time.Time {
	if m.opts.observer == nil {
		return time.Time{}
	}
	return m.opts.clock.Now()
}

// observeAcquired reports l acquired after an attempt started at begun,
// and returns the context to hold it with and the holding's observer (nil
// for none).
func (m *Manager) observeAcquired(ctx context.Context, l Lease, begun time.Time) (context.Context, *holdObserver) {
	o := m.opts.observer
	if o == nil {
		return ctx, nil
	}
	ho := &holdObserver{acquired: m.opts.clock.Now()}
	for _, t := range m.opts.tracers {
		m.call(func() {
			c, end := t.TraceHold(ctx, l)
			if c != nil && end != nil {
				ctx, ho.ends = c, append(ho.ends, end)
			}
		})
	}
	m.emit(Event{Kind: EventAcquired, Lease: l, Wait: ho.acquired.Sub(begun)})
	return ctx, ho
}

// observeRenewed reports h renewed as l.
func (h *holding) observeRenewed(l Lease) {
	if h.observed != nil {
		h.m.emit(Event{Kind: EventRenewed, Lease: l})
	}
}

// observeLost reports h lost, at once: it is the renewal loop's Lost, called
// once, on the clock's goroutine that found the loss (or inside hold, for a
// lease already past its deadline), before finish can stop the loop.
func (h *holding) observeLost(error) {
	ho := h.observed
	if ho == nil {
		return
	}
	held := h.m.opts.clock.Now().Sub(ho.acquired)
	h.m.emit(Event{Kind: EventLost, Lease: h.current(), Held: held})
}

// observeReleased reports h released as l, with the provider's error.
func (h *holding) observeReleased(l Lease, err error) {
	ho := h.observed
	if ho == nil {
		return
	}
	held := h.m.opts.clock.Now().Sub(ho.acquired)
	outcome := err
	if h.loop.Err() != nil {
		outcome = ErrLockLost
	}
	h.m.emit(Event{Kind: EventReleased, Lease: l, Held: held, Err: err})
	for i := len(ho.ends) - 1; i >= 0; i-- { // the innermost first
		h.m.call(func() { ho.ends[i](outcome) })
	}
}

// emit calls the observer under the panic policy.
func (m *Manager) emit(ev Event) {
	m.call(func() { m.opts.observer.Observe(ev) })
}

func (m *Manager) call(f func()) {
	callback.Call("observer", m.reportPanic, f)
}
