package lease

import (
	"context"
	"strconv"
	"time"

	"github.com/leasehold/lease/internal/callback"
)

// Option configures a Service. Options are applied in order by New.
//
// An option constructor never panics: it records what it is given, and New
// (or Restore) returns a *Error with Code CodeInvalidArgument whose Field
// names the first option given a value it can never take, such as a nil
// function or a negative capacity. Options are plain values, safe to share
// and reuse across calls.
type Option interface {
	apply(*options)
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// Defaults for New.
const (
	DefaultAuditCapacity  = 4096
	DefaultEndedCapacity  = 4096
	DefaultObserverBuffer = 16384
)

type options struct {
	shared         shared // WithClock, WithPanicHandler, WithLogger
	clock          Clock  // the shared clock, or SystemClock()
	minTTL         time.Duration
	maxTTL         time.Duration
	auditCapacity  int
	endedCapacity  int
	auditSink      func(Decision)
	traceID        func(context.Context) string
	customTrace    bool            // traceID is the user's, so calls to it are guarded
	report         callback.Report // to the panic handler, or the logger
	observerBuffer int
	observer       *observerHook // nil: no observer (WithObserver)
	observed       EventSet      // the events the observer is given (WithObserverOf)
}

// refuse records that option was given a value it can never take, unless
// an earlier option was refused already: New reports the first.
func (o *options) refuse(option, detail string) { o.shared.Refuse(option, detail) }

func defaultOptions() options {
	return options{
		minTTL:         1,
		maxTTL:         1<<63 - 1,
		auditCapacity:  DefaultAuditCapacity,
		endedCapacity:  DefaultEndedCapacity,
		traceID:        TraceIDFromContext,
		observerBuffer: DefaultObserverBuffer,
	}
}

// WithTTLBounds restricts the TTLs Grant accepts to [min, max]. TTLs outside
// get LS_INVALID_ARGUMENT. New returns an error unless 0 < min <= max.
func WithTTLBounds(min, max time.Duration) Option {
	return optionFunc(func(o *options) {
		if min <= 0 || max < min {
			o.refuse("WithTTLBounds", "bounds ["+min.String()+", "+max.String()+"] need 0 < min <= max")
			return
		}
		o.minTTL, o.maxTTL = min, max
	})
}

// WithAuditCapacity sets how many Decisions Audit retains (default 4096).
// 0 retains none; the audit observer, if any, still sees every decision. New returns
// an error if n < 0.
func WithAuditCapacity(n int) Option {
	return optionFunc(func(o *options) {
		if n < 0 {
			o.refuse("WithAuditCapacity", "capacity "+strconv.Itoa(n)+" is negative")
			return
		}
		o.auditCapacity = n
	})
}

// WithEndedCapacity sets how many ended leases the service remembers (default
// 4096) to tell an expired lease from a revoked one. Past that, an ended
// lease is reported as expired (LS_STALE_USE for Use), never as unknown.
// New returns an error if n < 0.
func WithEndedCapacity(n int) Option {
	return optionFunc(func(o *options) {
		if n < 0 {
			o.refuse("WithEndedCapacity", "capacity "+strconv.Itoa(n)+" is negative")
			return
		}
		o.endedCapacity = n
	})
}

// WithAuditObserver makes the service tell o about every Decision, the
// audit trail's records as Audit keeps them (allowed Uses, trace IDs and
// revisions included), in order, outside the service's lock, under the
// service's panic policy (reported as Callback "audit observer"); o may call
// back into the service. Decisions wait for a slow observer in a buffer of
// WithObserverBuffer's size; when it is full, further decisions skip the
// observer (the audit ring still records them) and are counted by
// DroppedDecisions. SlogObserver logs them; Observers shares the option
// between several observers. New returns an error if o is nil.
//
// Every decision, a Use among them, is built and queued for o: for hooks
// and metrics, WithObserver's Events cost less.
func WithAuditObserver(o Observer[Decision]) Option {
	return auditOption("WithAuditObserver", o)
}

// auditOption is WithAuditObserver, refusals named after option.
func auditOption(option string, o Observer[Decision]) Option {
	return optionFunc(func(opts *options) {
		if o == nil {
			opts.refuse(option, "observer must not be nil")
			return
		}
		if f, ok := o.(ObserverFunc[Decision]); ok {
			if f == nil {
				opts.refuse(option, "observer func must not be nil")
				return
			}
			opts.auditSink = f // called directly
			return
		}
		opts.auditSink = o.Observe
	})
}

// WithObserverBuffer sets how many decisions may wait for the audit observer
// (default DefaultObserverBuffer) before further ones are dropped for it and
// counted by DroppedDecisions, and how many events may wait for the
// observer (WithObserver) likewise. The bound keeps a blocked or slow one
// from growing the service's memory without limit. New returns an error if
// n < 1.
func WithObserverBuffer(n int) Option {
	return optionFunc(func(o *options) {
		if n < 1 {
			o.refuse("WithObserverBuffer", "buffer "+strconv.Itoa(n)+" is less than 1")
			return
		}
		o.observerBuffer = n
	})
}

// WithTraceIDFunc sets how a trace ID is read from an operation's context
// for its Decision, for example from an OpenTelemetry span. The default
// reads the value set by WithTraceID. New returns an error if f is nil.
func WithTraceIDFunc(f func(context.Context) string) Option {
	return optionFunc(func(o *options) {
		if f == nil {
			o.refuse("WithTraceIDFunc", "func must not be nil")
			return
		}
		o.traceID, o.customTrace = f, true
	})
}
