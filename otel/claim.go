package otel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/leasehold/lease/claim"
)

// Attribute keys of the claim instruments and spans.
const (
	keyQueue   = attribute.Key("lease.claim.queue")
	keyOutcome = attribute.Key("lease.claim.outcome")
	keyItem    = attribute.Key("lease.claim.item")
	keyOwner   = attribute.Key("lease.claim.owner")
	keyAttempt = attribute.Key("lease.claim.attempt")
	keyJob     = attribute.Key("lease.claim.job")
)

// claimObserver is the claim.Observer and claim.HandlerTracer of a
// Telemetry.
type claimObserver struct {
	tracer   trace.Tracer
	claimed  metric.Int64Counter
	settled  metric.Int64Counter
	pickup   metric.Float64Histogram
	duration metric.Float64Histogram
	active   metric.Int64UpDownCounter
	skipped  metric.Int64Counter
}

func (o *claimObserver) init(m metric.Meter, tracer trace.Tracer, add func(error)) {
	o.tracer = tracer
	var err error
	o.claimed, err = m.Int64Counter("lease.claim.claimed",
		metric.WithDescription("Items claimed, by queue."), metric.WithUnit("{item}"))
	add(err)
	o.settled, err = m.Int64Counter("lease.claim.settled",
		metric.WithDescription("Items settled, by queue and outcome: completed, failed, dead_lettered, snoozed, cancelled."),
		metric.WithUnit("{item}"))
	add(err)
	o.pickup, err = m.Float64Histogram("lease.claim.pickup.latency",
		metric.WithDescription("Time from enqueue to the first claim of an item, when the store can tell."),
		metric.WithUnit("s"))
	add(err)
	o.duration, err = m.Float64Histogram("lease.claim.handler.duration",
		metric.WithDescription("Time Work handlers ran, by queue and outcome: ok or error."), metric.WithUnit("s"))
	add(err)
	o.active, err = m.Int64UpDownCounter("lease.claim.handlers.active",
		metric.WithDescription("Work handlers running now: claims in flight."), metric.WithUnit("{handler}"))
	add(err)
	o.skipped, err = m.Int64Counter("lease.claim.ticks.skipped",
		metric.WithDescription("Ticks of periodic jobs whose arguments made no item, by queue and job."),
		metric.WithUnit("{tick}"))
	add(err)
}

// Claim returns the observer for claim.WithObserver. It is also a
// claim.HandlerTracer: every Work handler runs in a span.
func (t *Telemetry) Claim() claim.Observer { return &t.claim }

// Observe implements claim.Observer.
func (o *claimObserver) Observe(e claim.Event) {
	ctx := context.Background()
	queue := keyQueue.String(e.Queue)
	switch e.Kind {
	case claim.EventClaimed:
		o.claimed.Add(ctx, 1, metric.WithAttributes(queue))
		if e.PickupKnown {
			o.pickup.Record(ctx, e.Pickup.Seconds(), metric.WithAttributes(queue))
		}
	case claim.EventHandled:
		outcome := "ok"
		if e.Err != nil {
			outcome = "error"
		}
		o.duration.Record(ctx, e.Duration.Seconds(), metric.WithAttributes(queue, keyOutcome.String(outcome)))
	case claim.EventTickSkipped:
		o.skipped.Add(ctx, 1, metric.WithAttributes(queue, keyJob.String(e.Job)))
	default:
		o.settled.Add(ctx, 1, metric.WithAttributes(queue, keyOutcome.String(e.Kind.String())))
	}
}

// TraceHandler implements claim.HandlerTracer: the handler runs in a span
// named "claim.handle QUEUE", ended with the handler's error.
func (o *claimObserver) TraceHandler(ctx context.Context, c claim.Claim) (context.Context, func(error)) {
	ctx, span := o.tracer.Start(ctx, "claim.handle "+c.Queue, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(keyQueue.String(c.Queue), keyItem.Int64(int64(c.Item)),
			keyOwner.String(c.Owner), keyAttempt.Int(c.Attempt)))
	queue := metric.WithAttributes(keyQueue.String(c.Queue))
	o.active.Add(ctx, 1, queue)
	return ctx, func(err error) {
		o.active.Add(ctx, -1, queue)
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}
