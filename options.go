package lease

import (
	"context"
	"fmt"
	"time"
)

// Option configures a Service. Options are applied in order by New.
type Option interface {
	apply(*options)
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// Defaults for New.
const (
	DefaultAuditCapacity = 4096
	DefaultEndedCapacity = 4096
	DefaultSinkBuffer    = 16384
)

type options struct {
	clock         Clock
	minTTL        time.Duration
	maxTTL        time.Duration
	auditCapacity int
	endedCapacity int
	auditSink     func(Decision)
	onExpire      func(Lease)
	traceID       func(context.Context) string
	customTrace   bool // traceID is the user's, so calls to it are guarded
	onPanic       func(*PanicError)
	sinkBuffer    int
	observer      *observerHook // nil: no observer (WithObserver)
	observed      EventSet      // the events the observer is given (WithObserverOf)
}

func defaultOptions() options {
	return options{
		clock:         SystemClock(),
		minTTL:        1,
		maxTTL:        1<<63 - 1,
		auditCapacity: DefaultAuditCapacity,
		endedCapacity: DefaultEndedCapacity,
		traceID:       TraceIDFromContext,
		onPanic:       LogPanic,
		sinkBuffer:    DefaultSinkBuffer,
	}
}

// WithClock sets the clock the service reads time from and arms its timer on.
// The default is SystemClock(). It panics if c is nil.
func WithClock(c Clock) Option {
	if c == nil {
		panic("lease: WithClock: nil clock")
	}
	return optionFunc(func(o *options) { o.clock = c })
}

// WithTTLBounds restricts the TTLs Grant accepts to [min, max]. TTLs outside
// get LS_INVALID_ARGUMENT. It panics unless 0 < min <= max.
func WithTTLBounds(min, max time.Duration) Option {
	if min <= 0 || max < min {
		panic(fmt.Sprintf("lease: WithTTLBounds(%v, %v): need 0 < min <= max", min, max))
	}
	return optionFunc(func(o *options) { o.minTTL, o.maxTTL = min, max })
}

// WithAuditCapacity sets how many Decisions Audit retains (default 4096).
// 0 retains none; the sink, if any, still sees every decision. It panics if
// n < 0.
func WithAuditCapacity(n int) Option {
	if n < 0 {
		panic(fmt.Sprintf("lease: WithAuditCapacity(%d): negative", n))
	}
	return optionFunc(func(o *options) { o.auditCapacity = n })
}

// WithEndedCapacity sets how many ended leases the service remembers (default
// 4096) to tell an expired lease from a revoked one. Past that, an ended
// lease is reported as expired (LS_STALE_USE for Use), never as unknown. It
// panics if n < 0.
func WithEndedCapacity(n int) Option {
	if n < 0 {
		panic(fmt.Sprintf("lease: WithEndedCapacity(%d): negative", n))
	}
	return optionFunc(func(o *options) { o.endedCapacity = n })
}

// WithAuditSink streams every Decision to sink, in order, outside the
// service's lock. The sink may call back into the service. Decisions wait
// for a slow sink in a buffer of WithSinkBuffer's size; when it is full,
// further decisions skip the sink (the audit ring still records them) and
// are counted by DroppedDecisions. It panics if sink is nil.
func WithAuditSink(sink func(Decision)) Option {
	if sink == nil {
		panic("lease: WithAuditSink: nil sink")
	}
	return optionFunc(func(o *options) { o.auditSink = sink })
}

// WithSinkBuffer sets how many decisions may wait for the audit sink
// (default DefaultSinkBuffer) before further ones are dropped for the sink
// and counted by DroppedDecisions. The bound keeps a blocked or slow sink
// from growing the service's memory without limit. It panics if n < 1.
func WithSinkBuffer(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("lease: WithSinkBuffer(%d): need n >= 1", n))
	}
	return optionFunc(func(o *options) { o.sinkBuffer = n })
}

// WithOnExpire calls f with every lease that expires, in deadline order,
// outside the service's lock. The Lease's Keys are the keys that were
// deleted with it. f may call back into the service. It panics if f is nil.
func WithOnExpire(f func(Lease)) Option {
	if f == nil {
		panic("lease: WithOnExpire: nil func")
	}
	return optionFunc(func(o *options) { o.onExpire = f })
}

// WithTraceIDFunc sets how a trace ID is read from an operation's context
// for its Decision, for example from an OpenTelemetry span. The default
// reads the value set by WithTraceID. It panics if f is nil.
func WithTraceIDFunc(f func(context.Context) string) Option {
	if f == nil {
		panic("lease: WithTraceIDFunc: nil func")
	}
	return optionFunc(func(o *options) { o.traceID, o.customTrace = f, true })
}
