package lease

import (
	"slices"
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
	// audit observer because its buffer was full (see DroppedDecisions).
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

// Event is one thing a Service's observer is told about (WithObserver).
// It is a plain value, safe to copy and to keep.
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

// EventSet is a set of the events an observer is given (see
// WithObserverOf): a union of the constants below. It is a plain value,
// safe to share.
type EventSet uint8

// The events an EventSet may hold.
const (
	// GrantEvents are the EventGranted events.
	GrantEvents EventSet = 1 << iota
	// RenewEvents are the EventRenewed events.
	RenewEvents
	// RevokeEvents are the EventEnded events of revoked leases.
	RevokeEvents
	// ExpireEvents are the EventEnded events of expired leases.
	ExpireEvents
	// DenyEvents are the EventDenied events.
	DenyEvents
	// AllEvents are all the events, as WithObserver gives them.
	AllEvents = GrantEvents | RenewEvents | RevokeEvents | ExpireEvents | DenyEvents
)

// WithObserver makes the service tell o about all its events; it is
// WithObserverOf(o, AllEvents). Without an observer an event costs a nil
// check. New returns an error if o is nil.
//
// o is given the grants, renewals, endings and denials the audit observer
// and the ending subscribers see, in the same order, without allowed Uses
// (the hot path stays free of them). Observe is called outside the
// service's lock, by one goroutine at a time, under the service's panic
// policy (reported as Callback "observer"); it may call back into the
// service. Events wait for a slow observer in a buffer of WithObserverBuffer's
// size, which an event leaves once the observer has returned from it; past
// it they are dropped and counted, and the count is reported by an
// EventEventsDropped once there is room again (in an empty buffer of size
// one, the report takes a place of its own beyond the bound). Nothing is
// observed after Close returns. Several observers share the option through
// Observers.
func WithObserver(o Observer[Event]) Option {
	return observerOption("WithObserver", o, AllEvents)
}

// WithObserverOf makes the service tell o about the events in set only, and
// about the drops (EventDecisionsDropped and EventEventsDropped), which
// are always reported. The other events cost o nothing: they are neither
// queued nor delivered, nor counted as dropped when o's buffer is full.
// The events selected arrive as WithObserver would give them, in the same
// order. An observer that needs only the rare events (expiries, denials)
// next to counts read from Stats leaves the frequent ones out. New returns
// an error if o is nil or set holds anything but the EventSet constants.
func WithObserverOf(o Observer[Event], set EventSet) Option {
	return observerOption("WithObserverOf", o, set)
}

// observerOption is WithObserverOf, refusals named after option.
func observerOption(option string, o Observer[Event], set EventSet) Option {
	return optionFunc(func(opts *options) {
		switch {
		case o == nil:
			opts.refuse(option, "observer must not be nil")
			return
		case set&^AllEvents != 0:
			opts.refuse(option, "unknown events in set "+strconv.Itoa(int(set)))
			return
		}
		f, _ := o.(ObserverFunc[Event]) // called directly: one copy of the Event fewer per call
		// Each Service built with the option gets hooks of its own.
		opts.observer, opts.observed = &observerHook{obs: o, fn: f}, set
	})
}

// observerHook is one Service's observer and its queue. Events wait in the
// queue as compact records, apart from the other notifications, and become
// Events only when they are delivered, outside the lock.
type observerHook struct {
	obs Observer[Event]
	fn  func(Event) // obs's own function, if obs is an ObserverFunc
	// early counts records delivered in the middle of a batch, ahead of a
	// sink or subscriber call that may block: they no longer wait, so they
	// free room in the buffer before the batch ends. Written by the
	// delivering goroutine, read under the service's lock.
	early atomic.Int64
	// Guarded by the service's lock.
	queue       []observed // waiting for delivery, in decision order
	spare       []observed // a delivered batch's buffer, kept for reuse
	pending     int        // records queued or in a batch being delivered
	missed      uint64     // events dropped since the last report
	seenDropped uint64     // DroppedDecisions as last reported
}

// observed is an Event waiting for delivery, in 80 bytes, with its time
// kept as nanoseconds since the service epoch: nothing is converted under
// the lock.
type observed struct {
	kind    EventKind
	reason  EndReason
	purpose Purpose
	// pos is the length of the service's outbox when the record was
	// queued: it goes out after the notifications queued before it and
	// before those queued after it.
	pos    int32
	id     ID
	at     int64 // nanoseconds since the epoch; unused for the dropped kinds
	n      int64 // Lag for an expiry, Count for the dropped kinds
	holder string
	action Action
	code   Code // a copy: the *Error itself belongs to the caller
}

// observe turns a decision into an event and queues it. Called by decide,
// with the lock held, only when there is an observer and the decision is
// not an allowed Use.
func (s *Service) observe(at int64, action Action, e *entry, id ID, err *Error) {
	kind, reason, in := EventDenied, EndReason(0), DenyEvents
	switch {
	case err != nil:
	case action == ActionGrant:
		kind, in = EventGranted, GrantEvents
	case action == ActionRenew:
		kind, in = EventRenewed, RenewEvents
	case action == ActionRevoke:
		kind, reason, in = EventEnded, EndRevoked, RevokeEvents
	case action == ActionExpire:
		kind, reason, in = EventEnded, EndExpired, ExpireEvents
	default:
		return // an allowed Use: not an event
	}
	h := s.opts.observer
	if s.opts.observed&in == 0 {
		// Not selected: nothing of the hook is read, unless decisions
		// were dropped, which is rare.
		if s.dropped != 0 && s.dropped > h.seenDropped {
			s.reportDecisionsDropped(h)
		}
		return
	}
	var q *observed
	if n := len(h.queue); n < cap(h.queue) && h.missed == 0 && s.dropped == h.seenDropped &&
		h.pending < s.opts.observerBuffer+int(h.early.Load()) {
		// The common case, without calls: room in the buffer and in its
		// array, and no drops to report first.
		h.pending++
		h.queue = h.queue[:n+1]
		q = &h.queue[n]
		q.pos = int32(len(s.outbox))
	} else if q = s.observedSlotReporting(h); q == nil {
		return
	}
	// Every field written once, in place: a record built aside and copied
	// in would be read back while its narrow fields are still being
	// stored, a stall that costs more than the copy.
	q.kind, q.reason, q.id, q.action, q.at, q.n, q.code = kind, reason, id, action, at, 0, ""
	if err != nil {
		q.code = err.Code
	}
	if reason == EndExpired {
		q.n = s.now() - at // the lag: at is the expiry instant
	}
	q.holder, q.purpose = "", 0
	if e != nil {
		q.holder, q.purpose = e.holder(), e.purpose
	}
}

// observes reports whether observe has anything to do for a decision that
// is not an allowed Use: the observer selected its event, or dropped
// decisions may be waiting to be reported. Inlined in decide, it spares an
// unselected event the call.
func (s *Service) observes(action Action, err *Error) bool {
	if s.opts.observed == AllEvents {
		return true
	}
	in := DenyEvents
	switch {
	case err != nil:
	case action == ActionGrant:
		in = GrantEvents
	case action == ActionRevoke:
		in = RevokeEvents
	case action == ActionRenew:
		in = RenewEvents
	default:
		in = ExpireEvents
	}
	return s.opts.observed&in != 0 || s.dropped != 0
}

// setDrop makes q a report of n dropped decisions or events.
func (q *observed) setDrop(kind EventKind, n uint64) {
	q.kind, q.reason, q.purpose, q.id, q.at, q.n = kind, 0, 0, 0, 0, int64(n)
	q.holder, q.action, q.code = "", "", ""
}

// reportDecisionsDropped queues, in place of an event the observer did not
// select, the report of the decisions the audit observer missed since the last
// one, so that an observer of few events still hears of them. It queues
// the report only if there is room and no events were dropped before it
// (the next selected event reports both); it counts nothing as dropped.
// Called with the lock held, when there is something to report.
func (s *Service) reportDecisionsDropped(h *observerHook) {
	if h.missed == 0 && h.pending < s.opts.observerBuffer+int(h.early.Load()) {
		s.appendObserved(h).setDrop(EventDecisionsDropped, s.dropped-h.seenDropped)
		h.seenDropped = s.dropped
	}
}

// observedSlotReporting queues a report of the decisions the audit observer
// missed, if any, and then returns observedSlot's record.
func (s *Service) observedSlotReporting(h *observerHook) *observed {
	if s.dropped > h.seenDropped {
		if q := s.observedSlot(h); q != nil {
			q.setDrop(EventDecisionsDropped, s.dropped-h.seenDropped)
			h.seenDropped = s.dropped
		}
	}
	return s.observedSlot(h)
}

// observedSlot queues a record for the observer, after a report of the
// events dropped before it, and returns it to be filled in: every field
// but pos holds whatever the buffer held. It returns nil if the buffer is
// full, and counts the record as dropped. Called with the lock held.
func (s *Service) observedSlot(h *observerHook) *observed {
	room := s.opts.observerBuffer - h.pending + int(h.early.Load())
	if h.missed > 0 && (room >= 2 || room == s.opts.observerBuffer) {
		s.appendObserved(h).setDrop(EventEventsDropped, h.missed)
		h.missed = 0
		if room >= 2 {
			room--
		} // else an empty buffer of one: the report goes beyond the bound, or nothing else would ever fit
	}
	if room < 1 || h.missed > 0 {
		h.missed++
		return nil
	}
	return s.appendObserved(h)
}

// appendObserved appends a record to the observer's queue, with only its
// pos set, and returns it. Called with the lock held.
func (s *Service) appendObserved(h *observerHook) *observed {
	h.pending++
	n := len(h.queue)
	h.queue = slices.Grow(h.queue, 1)[:n+1]
	q := &h.queue[n]
	q.pos = int32(len(s.outbox))
	return q
}

// deliverObserved calls the observer with each record of run, in order,
// outside the lock, under the panic policy: a panic is reported and the
// next record is delivered. It stops once the service is closed. It clears
// each record's holder, so that the buffer, kept for reuse, holds on to no
// caller's string (the other strings are the package's own constants).
func (s *Service) deliverObserved(run []observed) {
	h := s.opts.observer
	i := 0
	for i < len(run) && !s.stopped.Load() {
		// One guard for the whole run; after a panic it resumes past the
		// record that panicked.
		callback.Call("observer", s.reportPanic, func() {
			for i < len(run) && !s.stopped.Load() {
				r := &run[i]
				i++
				// The narrow fields first, the time conversion next, the
				// rest last: the Event is copied to the call as soon as it
				// is built, and a copy that reads fields still being
				// stored stalls.
				var ev Event
				ev.Kind, ev.Purpose, ev.Reason = r.kind, r.purpose, r.reason
				if r.kind == EventDecisionsDropped || r.kind == EventEventsDropped {
					ev.Count = uint64(r.n)
				} else {
					ev.At, ev.Lag = s.at(r.at), time.Duration(r.n)
				}
				ev.LeaseID, ev.Holder, ev.Action, ev.Code = r.id, r.holder, r.action, r.code
				r.holder = ""
				if h.fn != nil {
					h.fn(ev)
				} else {
					h.obs.Observe(ev)
				}
			}
		})
	}
	clear(run[i:]) // not delivered: the service is closed
}
