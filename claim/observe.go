package claim

import (
	"context"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/observers"
)

// EventKind says what an Event reports. It is a plain value, safe to
// share.
type EventKind uint8

// The kinds of Event.
const (
	// EventClaimed reports an item claimed, by Claim or by Work.
	EventClaimed EventKind = iota + 1
	// EventCompleted reports an item completed.
	EventCompleted
	// EventFailed reports a failed item requeued for another attempt.
	EventFailed
	// EventDeadLettered reports a failed item that ran out of attempts.
	EventDeadLettered
	// EventSnoozed reports an item given back by Snooze.
	EventSnoozed
	// EventCancelled reports an item removed by Cancel.
	EventCancelled
	// EventHandled reports a Work handler that returned, with its
	// Duration and error.
	EventHandled
	// EventTickSkipped reports a tick of a periodic job (Periodic) that
	// was not enqueued because its Args returned nil, panicked, or gave
	// arguments that do not make an item: its Job, Tick and Err. The
	// leader asks for a tick's arguments each time it enqueues ahead, so
	// a tick may be reported more than once.
	EventTickSkipped
)

// String returns the kind's name, such as "claimed" or "dead_lettered".
func (k EventKind) String() string {
	switch k {
	case EventClaimed:
		return "claimed"
	case EventCompleted:
		return "completed"
	case EventFailed:
		return "failed"
	case EventDeadLettered:
		return "dead_lettered"
	case EventSnoozed:
		return "snoozed"
	case EventCancelled:
		return "cancelled"
	case EventHandled:
		return "handled"
	case EventTickSkipped:
		return "tick_skipped"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one thing an Observer is told about. It is a plain value, safe
// to copy and to keep.
type Event struct {
	Kind    EventKind
	Queue   string
	Item    ItemID
	Owner   string // "" for EventCancelled
	Attempt int    // the claim's attempt; 0 for EventCancelled
	// Pickup is, for the EventClaimed of an item's first attempt, how long
	// it waited from Enqueue to the claim, when the store reports the
	// claim's EnqueuedAt (Memory and the PostgreSQL store do); PickupKnown
	// says whether it is set.
	Pickup      time.Duration
	PickupKnown bool
	// Duration is, for EventHandled, how long the handler ran, on the
	// Broker's clock.
	Duration time.Duration
	// Err is, for EventHandled, the error the handler returned (a panic
	// becomes an error); nil for success. For EventTickSkipped, the
	// error of the arguments that made no item; nil when Args returned nil
	// or panicked (the panic goes to the panic handler).
	Err error
	// Job and Tick are, for EventTickSkipped, the periodic job's Name and
	// the tick skipped.
	Job  string
	Tick time.Time
}

// Observer receives a Broker's events: lease.Observer[Event], the module's
// one observer concept, under its rules. Observe is called on the goroutine
// of the call that caused the event, after the store has answered and
// outside every lock, under the Broker's panic policy (reported as
// Callback "observer"); it must be safe for concurrent use and may call the
// Broker. Nothing is queued, so nothing is buffered. Calls that fail are
// not events. lease.Observers shares one WithObserver between several
// observers.
type Observer = lease.Observer[Event]

// HandlerTracer is implemented by an Observer that wraps each Work handler,
// for example in a trace span. TraceHandler is called before the handler
// with its context and claim, and returns the context the handler gets
// and a function that Work calls with the handler's error once it has
// returned. It must be safe for concurrent use; a panic in it is reported
// and the handler runs with its own context.
type HandlerTracer interface {
	TraceHandler(ctx context.Context, c Claim) (context.Context, func(err error))
}

// ObserverFunc adapts a function to an Observer: lease.ObserverFunc[Event].
// Like any func value it is safe to share; the function must be safe for
// concurrent use.
type ObserverFunc = lease.ObserverFunc[Event]

// WithObserver makes the Broker tell o about its events (see Observer); if
// o is also a HandlerTracer, it wraps every Work handler, and so does
// every HandlerTracer among the observers o joins if it was made by
// lease.Observers (each in its own context, the first outermost). Without
// it an event costs a nil check. New returns an error if o is nil.
func WithObserver(o Observer) Option {
	return optionFunc(func(opts *options) {
		if observers.Set(opts.refuse, &opts.observer, o) {
			opts.tracers = observers.Find[HandlerTracer](o)
		}
	})
}

// emit calls the observer under the panic policy.
func (b *Broker) emit(ev Event) {
	b.call("observer", func() { b.opts.observer.Observe(ev) })
}

// observeSettled reports a settlement of c that returned err, and returns
// err.
func (b *Broker) observeSettled(c Claim, kind EventKind, err error) error {
	if b.opts.observer != nil && err == nil {
		b.emit(Event{Kind: kind, Queue: c.Queue, Item: c.Item, Owner: c.Owner, Attempt: c.Attempt})
	}
	return err
}

// observeCancel reports a cancel that returned err, and returns err.
func (b *Broker) observeCancel(queue string, id ItemID, err error) error {
	if b.opts.observer != nil && err == nil {
		b.emit(Event{Kind: EventCancelled, Queue: queue, Item: id})
	}
	return err
}

// observeClaims reports claims made, each for lease, and returns them with
// err unchanged. A first attempt's pickup latency is the claim's instant
// (its expiry less its lease) less its enqueue, both on the store's clock.
func (b *Broker) observeClaims(claims []Claim, lease time.Duration, err error) ([]Claim, error) {
	if b.opts.observer == nil {
		return claims, err
	}
	for _, c := range claims {
		ev := Event{Kind: EventClaimed, Queue: c.Queue, Item: c.Item, Owner: c.Owner, Attempt: c.Attempt}
		if c.Attempt == 1 && !c.EnqueuedAt.IsZero() {
			ev.Pickup, ev.PickupKnown = c.ExpiresAt.Add(-lease).Sub(c.EnqueuedAt), true
		}
		b.emit(ev)
	}
	return claims, err
}

// noTrace ends a handler nobody observes.
func noTrace(error) {}

// traceHandler starts observing the handler of j: it returns the context
// the handler gets and the function to call with its error.
func (b *Broker) traceHandler(j *job) (context.Context, func(error)) {
	o := b.opts.observer
	if o == nil {
		return j.ctx, noTrace
	}
	ctx := j.ctx
	var ends []func(error) // the HandlerTracers', in the order they began
	for _, t := range b.opts.tracers {
		b.call("observer", func() {
			c, end := t.TraceHandler(ctx, j.claim)
			if c != nil && end != nil {
				ctx, ends = c, append(ends, end)
			}
		})
	}
	start := j.r.clock.Now()
	c := j.claim
	return ctx, func(err error) {
		for i := len(ends) - 1; i >= 0; i-- { // the innermost first
			b.call("observer", func() { ends[i](err) })
		}
		b.emit(Event{Kind: EventHandled, Queue: c.Queue, Item: c.Item, Owner: c.Owner, Attempt: c.Attempt,
			Duration: j.r.clock.Now().Sub(start), Err: err})
	}
}

// outcomeEvent is the event of a Fail's outcome.
func outcomeEvent(o Outcome) EventKind {
	if o == DeadLettered {
		return EventDeadLettered
	}
	return EventFailed
}
