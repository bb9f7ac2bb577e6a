package otel

import (
	"context"
	"errors"
	"sync"

	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/leasehold/lease"
)

// ScopeName is the instrumentation scope of the meter and the tracer.
const ScopeName = "github.com/leasehold/lease/otel"

// Telemetry turns the events of the module's packages into metrics and
// spans. Create one with New; give its observers to the packages. A
// Telemetry and its observers are safe for concurrent use, and one
// Telemetry may observe any number of services, brokers and managers: their
// metrics add up.
type Telemetry struct {
	tracer trace.Tracer

	mu  sync.Mutex
	reg metric.Registration // nil once closed

	lease    leaseObserver
	claim    claimObserver
	lock     lockObserver
	election electionObserver
}

// Option configures New. Options are plain values, safe to share.
type Option interface{ apply(*config) }

type config struct {
	lockNames bool
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithLockNames puts the lock's name (attribute lease.lock.name) on the
// lock metrics, not only on the spans. Use it when the program locks a
// small, fixed set of names: every name is a time series of its own.
func WithLockNames() Option {
	return optionFunc(func(c *config) { c.lockNames = true })
}

// New returns a Telemetry that records on mp's meter and tp's tracer,
// both named ScopeName. A nil mp or tp means the global one
// (go.opentelemetry.io/otel's GetMeterProvider, GetTracerProvider). It
// fails if an option is nil (an error matching lease.ErrInvalidArgument
// whose Field is "Option") or an instrument cannot be created.
func New(mp metric.MeterProvider, tp trace.TracerProvider, opts ...Option) (*Telemetry, error) {
	var c config
	for _, o := range opts {
		if o == nil {
			return nil, &lease.Error{Package: "otel", Code: lease.CodeInvalidArgument, Op: "New", Field: "Option", Detail: "option must not be nil"}
		}
		o.apply(&c)
	}
	if mp == nil {
		mp = gotel.GetMeterProvider()
	}
	if tp == nil {
		tp = gotel.GetTracerProvider()
	}
	meter := mp.Meter(ScopeName)
	t := &Telemetry{tracer: tp.Tracer(ScopeName)}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	observables := t.lease.init(meter, add)
	t.claim.init(meter, t.tracer, add)
	t.lock.init(meter, t.tracer, c.lockNames, add)
	t.election.init(meter, add)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	reg, err := meter.RegisterCallback(t.lease.collect, observables...)
	if err != nil {
		return nil, err
	}
	t.reg = reg
	return t, nil
}

// Close unregisters the Telemetry's asynchronous instruments: the lease
// counts are no longer reported. The observers stay usable. Close is
// idempotent.
func (t *Telemetry) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reg == nil {
		return nil
	}
	err := t.reg.Unregister()
	t.reg = nil
	t.lease.forget()
	return err
}

// Lease returns the observer of lease services, for lease.WithObserver
// or, with the services registered by ObserveService, for
// lease.WithObserverOf with LeaseEvents.
//
// Alone, it counts the leases from the events it is given (every grant,
// renewal and ending: a cost on each). Once any service is registered, it
// counts none: the lease counts are then the registered services' own
// (see ObserveService), and the observer records only the expiry lag, the
// denials and the drops.
func (t *Telemetry) Lease() lease.Observer[lease.Event] { return &t.lease }

// ObserveService makes the Telemetry report svc's lease counts
// (lease.leases.active, granted, renewed and ended) from svc.Stats, read
// when the metrics are collected: the service counts as it decides, so a
// grant, renewal or ending costs it a couple of additions and no event.
// Build svc with lease.WithObserverOf(t.Lease(), LeaseEvents) for the
// other lease metrics (the expiry lag, the denials, the drops), and
// register it once built: its counts start from its creation, so what it
// decided before it was registered is counted all the same. Reading the
// counts settles what is due, as every call on the service does: leases
// past their expiry are expired then, and their events recorded, in the
// same collection.
//
// From the first registration, the lease counts are those of the
// registered services only, and the Lease observer counts nothing itself:
// register every service the Telemetry observes. Several services add up,
// by purpose, as their events did: the metrics describe the process's
// leases, with no attribute per service. A service closed keeps its totals
// in the sums and leaves the active count; the Telemetry lets go of it at
// the next collection, and of every service on Close; after Close,
// ObserveService does nothing. Registering a service again changes
// nothing. It fails only if svc is nil.
func (t *Telemetry) ObserveService(svc *lease.Service) error {
	if svc == nil {
		return errNilService
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reg != nil {
		t.lease.observeService(svc)
	}
	return nil
}

// TraceID returns the trace ID of ctx's span, in hexadecimal, or, without
// a valid span, the ID lease.WithTraceID set (lease.TraceIDFromContext).
// Pass it to lease.WithTraceIDFunc so that audit Decisions carry the
// trace of the request that made them.
func TraceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		return sc.TraceID().String()
	}
	return lease.TraceIDFromContext(ctx)
}
