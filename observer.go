package lease

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/leasehold/lease/internal/callback"
)

// EventKind says what an Event reports. It is a plain value, safe to
// share.
type EventKind uint8

// The kinds of Event.
const (
	// EventGranted reports a lease granted.
	EventGranted EventKind = iota + 1
	// EventRenewed reports a lease renewed, by Renew or by a keep-alive.
	EventRenewed
	// EventEnded reports a lease that expired or was revoked.
	EventEnded
	// EventDenied reports an operation refused with an error Code.
	EventDenied
	// EventDecisionsDropped reports Count decisions that skipped the
	// audit sink because its buffer was full (see DroppedDecisions).
	EventDecisionsDropped
	// EventEventsDropped reports Count events that skipped the observer
	// itself because its buffer was full.
	EventEventsDropped
)

// String returns the kind's name, such as "granted" or "decisions_dropped".
func (k EventKind) String() string {
	switch k {
	case EventGranted:
		return "granted"
	case EventRenewed:
		return "renewed"
	case EventEnded:
		return "ended"
	case EventDenied:
		return "denied"
	case EventDecisionsDropped:
		return "decisions_dropped"
	case EventEventsDropped:
		return "events_dropped"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one thing an Observer is told about. It is a plain value, safe
// to copy and to keep.
type Event struct {
	Kind    EventKind
	LeaseID ID     // 0 for the dropped kinds and for a denial of no lease
	Holder  string // the lease's holder, when the lease is known
	// Purpose is the lease's purpose, when the lease is known: the
	// purpose granted, renewed or ended, or the lease's own for a denial.
	Purpose Purpose
	Action  Action    // the decision reported
	Reason  EndReason // EventEnded: why
	Code    Code      // EventDenied: the error's code
	// Lag is, for an expiry, how late the service processed it: the
	// instant it did minus the lease's ExpiresAt. A timer that fires on
	// time gives a lag near zero; a stalled process, a larger one.
	Lag time.Duration
	// Count is the number of decisions or events dropped (the dropped
	// kinds only).
	Count uint64
	// At is the service clock's time of the decision (zero for the
	// dropped kinds).
	At time.Time
}

// Observer receives a Service's events: the grants, renewals, endings and
// denials the audit sink and the ending subscribers see, in the same order,
// without allowed Uses (the hot path stays free of them). Observe is
// called outside the service's lock, by one goroutine at a time, under the
// service's panic policy (reported as Callback "observer"); it may call
// back into the service. Events wait for a slow observer in a buffer of
// WithSinkBuffer's size; past it they are dropped and counted, and the
// count is reported by an EventEventsDropped once there is room again.
// Nothing is observed after Close returns.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to an Observer. Like any func value it is
// safe to share; the function decides its own concurrency.
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }

// WithObserver makes the service tell o about its events (see Observer).
// Without it an event costs a nil check. It panics if o is nil.
func WithObserver(o Observer) Option {
	if o == nil {
		panic("lease: WithObserver: nil observer")
	}
	// Each Service built with the option gets hooks of its own.
	return optionFunc(func(opts *options) { opts.observer = &observerHook{obs: o} })
}

// observerHook is one Service's observer and the state of its buffer.
type observerHook struct {
	obs     Observer
	pending atomic.Int64 // events queued and not yet delivered
	// Guarded by the service's lock.
	missed      uint64 // events dropped since the last report
	seenDropped uint64 // DroppedDecisions as last reported
}

// observe turns a decision into an event and queues it. Called by decide,
// with the lock held, only when there is an observer and the decision is
// not an allowed Use.
func (s *Service) observe(at int64, action Action, e *entry, id ID, err *Error) {
	kind, reason := EventDenied, EndReason(0)
	switch {
	case err != nil:
	case action == ActionGrant:
		kind = EventGranted
	case action == ActionRenew:
		kind = EventRenewed
	case action == ActionRevoke:
		kind, reason = EventEnded, EndRevoked
	case action == ActionExpire:
		kind, reason = EventEnded, EndExpired
	default:
		return // an allowed Use: not an event
	}
	h := s.opts.observer
	if s.dropped > h.seenDropped {
		if ev := s.observedSlot(); ev != nil {
			ev.Kind, ev.Count = EventDecisionsDropped, s.dropped-h.seenDropped
			h.seenDropped = s.dropped
		}
	}
	ev := s.observedSlot()
	if ev == nil {
		return
	}
	// Written in place: events are queued on every grant and renewal.
	ev.Kind, ev.LeaseID, ev.Action, ev.Reason, ev.At = kind, id, action, reason, s.at(at)
	if err != nil {
		ev.Code = err.Code
	}
	if reason == EndExpired {
		ev.Lag = time.Duration(s.now() - at) // at is the expiry instant
	}
	if e != nil {
		ev.Holder, ev.Purpose = e.holder, e.purpose
	}
}

// observedSlot queues a zero event for the observer, after a report of
// the events dropped before it, and returns it to be filled in; nil if the
// buffer is full. Called with the lock held.
func (s *Service) observedSlot() *Event {
	h := s.opts.observer
	room := int64(s.opts.sinkBuffer) - h.pending.Load()
	if h.missed > 0 && room >= 2 {
		ev := s.appendObserved()
		ev.Kind, ev.Count = EventEventsDropped, h.missed
		h.missed = 0
		room--
	}
	if room < 1 || h.missed > 0 {
		h.missed++
		return nil
	}
	return s.appendObserved()
}

// appendObserved appends a zero observer event to the outbox and returns
// it.
func (s *Service) appendObserved() *Event {
	s.opts.observer.pending.Add(1)
	s.outbox = append(s.outbox, event{kind: eventObserve})
	return &s.outbox[len(s.outbox)-1].observed
}

// deliverObserved calls the observer, outside the lock.
func (s *Service) deliverObserved(ev *Event) {
	h := s.opts.observer
	h.pending.Add(-1)
	callback.Call("observer", s.reportPanic, func() { h.obs.Observe(*ev) })
}
