package otel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/leasehold/lease/lock"
)

// Attribute keys of the lock spans and instruments.
const (
	keyLock      = attribute.Key("lease.lock.name")
	keyExecution = attribute.Key("lease.lock.execution_id")
	keyToken     = attribute.Key("lease.lock.token")
	keyLockEvent = attribute.Key("lease.lock.event")
)

// lockObserver is the lock.Observer and lock.HoldTracer of a Telemetry.
// Lock names are unbounded, so they go on spans only.
type lockObserver struct {
	tracer trace.Tracer
	wait   metric.Float64Histogram
	held   metric.Int64UpDownCounter
	hold   metric.Float64Histogram
	events metric.Int64Counter
	sets   [4]attribute.KeyValue // the events attribute of each kind
	names  bool                  // lock names on metrics (WithLockNames)
}

func (o *lockObserver) init(m metric.Meter, tracer trace.Tracer, names bool, add func(error)) {
	o.tracer, o.names = tracer, names
	var err error
	o.wait, err = m.Float64Histogram("lease.lock.wait.duration",
		metric.WithDescription("Time from the start of an attempt to the lock's acquisition."), metric.WithUnit("s"))
	add(err)
	o.held, err = m.Int64UpDownCounter("lease.lock.held",
		metric.WithDescription("Locks held now by the observed Managers."), metric.WithUnit("{lock}"))
	add(err)
	o.hold, err = m.Float64Histogram("lease.lock.hold.duration",
		metric.WithDescription("Time locks were held, from acquisition to release."), metric.WithUnit("s"))
	add(err)
	o.events, err = m.Int64Counter("lease.lock.events",
		metric.WithDescription("Lock events, by kind: acquired, renewed, lost, released."), metric.WithUnit("{event}"))
	add(err)
	for i, k := range []lock.EventKind{lock.EventAcquired, lock.EventRenewed, lock.EventLost, lock.EventReleased} {
		o.sets[i] = keyLockEvent.String(k.String())
	}
}

// Lock returns the observer for lock.WithObserver. It is also a
// lock.HoldTracer: every holding is a span.
func (t *Telemetry) Lock() lock.Observer { return &t.lock }

// Observe implements lock.Observer.
func (o *lockObserver) Observe(e lock.Event) {
	ctx := context.Background()
	var name []attribute.KeyValue
	if o.names {
		name = []attribute.KeyValue{keyLock.String(e.Lease.Name)}
	}
	if i := int(e.Kind) - 1; i >= 0 && i < len(o.sets) {
		o.events.Add(ctx, 1, metric.WithAttributes(append(name, o.sets[i])...))
	}
	attrs := metric.WithAttributes(name...)
	switch e.Kind {
	case lock.EventAcquired:
		o.wait.Record(ctx, e.Wait.Seconds(), attrs)
		o.held.Add(ctx, 1, attrs)
	case lock.EventReleased:
		o.held.Add(ctx, -1, attrs)
		o.hold.Record(ctx, e.Held.Seconds(), attrs)
	}
}

// TraceHold implements lock.HoldTracer: the holding is a span named
// "lock.hold NAME", ended with status Error if the lock was lost or its
// release failed.
func (o *lockObserver) TraceHold(ctx context.Context, l lock.Lease) (context.Context, func(error)) {
	ctx, span := o.tracer.Start(ctx, "lock.hold "+l.Name, trace.WithAttributes(keyLock.String(l.Name),
		keyExecution.String(l.ExecutionID), keyToken.Int64(int64(l.Token))))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			msg := err.Error()
			if errors.Is(err, lock.ErrLockLost) {
				msg = "lock lost"
			}
			span.SetStatus(codes.Error, msg)
		}
		span.End()
	}
}
