package election

import (
	"bytes"
	"context"
	"strconv"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/callback"
	"github.com/leasehold/lease/internal/observers"
)

// EventKind says what an Event reports. It is a plain value, safe to
// share.
type EventKind uint8

// The kinds of Event.
const (
	// EventElected reports a Campaign of this Election that won; it is
	// told before that Campaign returns.
	EventElected EventKind = iota + 1
	// EventDeposed reports the end of a leadership won by a Campaign of
	// this Election: resigned, cancelled or lost (see Cause); a Resign
	// that returns nil has seen it told.
	EventDeposed
)

// String returns "elected" or "deposed".
func (k EventKind) String() string {
	switch k {
	case EventElected:
		return "elected"
	case EventDeposed:
		return "deposed"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is a change of leader seen by this process: one of its campaigns
// won or stopped leading. It is a plain value; Value is its own copy.
type Event struct {
	Kind     EventKind
	Election string // the election's name
	Leader   Leader // the campaign's value and token; ExpiresAt is zero
	// Cause is, for EventDeposed, why the leadership ended: the cause of
	// its context (ErrLeadershipLost, or the campaign's context's error).
	Cause error
}

// Observer receives an Election's events: lease.Observer[Event], the
// module's one observer concept, under its rules. Observe is called on the
// campaign's goroutine, outside every lock, under the Election's panic
// policy (reported as Callback "observer"); it must be safe for
// concurrent use. Nothing is queued, so nothing is buffered.
// lease.Observers shares one WithObserver between several observers.
type Observer = lease.Observer[Event]

// ObserverFunc adapts a function to an Observer: lease.ObserverFunc[Event].
// Like any func value it is safe to share; the function must be safe for
// concurrent use.
type ObserverFunc = lease.ObserverFunc[Event]

// WithObserver makes the Election tell o when its campaigns win and stop
// leading. New returns an error if o is nil.
func WithObserver(o Observer) Option {
	return optionFunc(func(opts *options) { observers.Set(opts.refuse, &opts.observer, o) })
}

// observe reports a change of leadership of a campaign, if observed.
func (e *Election) observe(kind EventKind, value []byte, token uint64, ctx context.Context) {
	o := e.opts.observer
	if o == nil {
		return
	}
	ev := Event{Kind: kind, Election: e.name, Leader: Leader{Value: bytes.Clone(value), Token: token}}
	if kind == EventDeposed {
		ev.Cause = context.Cause(ctx)
	}
	callback.Call("observer", e.reportPanic, func() { o.Observe(ev) })
}
