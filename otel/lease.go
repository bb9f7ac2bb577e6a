package otel

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/leasehold/lease"
)

// Attribute keys.
const (
	keyPurpose   = attribute.Key("lease.purpose")
	keyEndReason = attribute.Key("lease.end.reason")
	keyCode      = attribute.Key("lease.code")
)

// purposeCounts are counts of one purpose.
type purposeCounts struct {
	active, granted, renewed atomic.Int64
	ended                    [3]atomic.Int64 // by EndReason (1 expired, 2 revoked)
}

// leaseObserver is the lease.Observer of a Telemetry. The frequent events
// only add to atomic counters, which collect reports.
type leaseObserver struct {
	counts [lease.MaxPurposes + 1]purposeCounts // by Purpose

	active   metric.Int64ObservableUpDownCounter
	granted  metric.Int64ObservableCounter
	renewed  metric.Int64ObservableCounter
	ended    metric.Int64ObservableCounter
	denials  metric.Int64Counter
	lag      metric.Float64Histogram
	dropped  metric.Int64Counter
	observer metric.Int64Counter
}

func (o *leaseObserver) init(m metric.Meter, add func(error)) []metric.Observable {
	var err error
	o.active, err = m.Int64ObservableUpDownCounter("lease.leases.active",
		metric.WithDescription("Leases active now."), metric.WithUnit("{lease}"))
	add(err)
	o.granted, err = m.Int64ObservableCounter("lease.leases.granted",
		metric.WithDescription("Leases granted."), metric.WithUnit("{lease}"))
	add(err)
	o.renewed, err = m.Int64ObservableCounter("lease.leases.renewed",
		metric.WithDescription("Lease renewals, by Renew and by keep-alives."), metric.WithUnit("{renewal}"))
	add(err)
	o.ended, err = m.Int64ObservableCounter("lease.leases.ended",
		metric.WithDescription("Leases ended, by reason: expired or revoked."), metric.WithUnit("{lease}"))
	add(err)
	o.denials, err = m.Int64Counter("lease.denials",
		metric.WithDescription("Operations refused, by error code."), metric.WithUnit("{operation}"))
	add(err)
	o.lag, err = m.Float64Histogram("lease.expiry.lag",
		metric.WithDescription("How late expiries were processed: the instant the service did minus the lease's expiry."),
		metric.WithUnit("s"))
	add(err)
	o.dropped, err = m.Int64Counter("lease.audit.dropped",
		metric.WithDescription("Audit decisions that skipped the audit sink because its buffer was full."),
		metric.WithUnit("{decision}"))
	add(err)
	o.observer, err = m.Int64Counter("lease.observer.dropped",
		metric.WithDescription("Service events that skipped this observer because its buffer was full."),
		metric.WithUnit("{event}"))
	add(err)
	return []metric.Observable{o.active, o.granted, o.renewed, o.ended}
}

// Observe implements lease.Observer.
func (o *leaseObserver) Observe(e lease.Event) {
	c := &o.counts[int(e.Purpose)%len(o.counts)]
	switch e.Kind {
	case lease.EventGranted:
		c.granted.Add(1)
		c.active.Add(1)
	case lease.EventRenewed:
		c.renewed.Add(1)
	case lease.EventEnded:
		c.ended[int(e.Reason)%len(c.ended)].Add(1)
		c.active.Add(-1)
		if e.Reason == lease.EndExpired {
			o.lag.Record(context.Background(), e.Lag.Seconds())
		}
	case lease.EventDenied:
		o.denials.Add(context.Background(), 1, metric.WithAttributes(keyCode.String(string(e.Code))))
	case lease.EventDecisionsDropped:
		o.dropped.Add(context.Background(), int64(e.Count))
	case lease.EventEventsDropped:
		o.observer.Add(context.Background(), int64(e.Count))
	}
}

// collect reports the counts of every purpose seen.
func (o *leaseObserver) collect(_ context.Context, obs metric.Observer) error {
	for p := range o.counts {
		c := &o.counts[p]
		granted := c.granted.Load()
		if granted == 0 && c.renewed.Load() == 0 {
			continue // never granted here: nothing to report
		}
		purpose := metric.WithAttributes(keyPurpose.String(lease.Purpose(p).String()))
		obs.ObserveInt64(o.active, c.active.Load(), purpose)
		obs.ObserveInt64(o.granted, granted, purpose)
		obs.ObserveInt64(o.renewed, c.renewed.Load(), purpose)
		for _, r := range []lease.EndReason{lease.EndExpired, lease.EndRevoked} {
			obs.ObserveInt64(o.ended, c.ended[r].Load(),
				metric.WithAttributes(keyPurpose.String(lease.Purpose(p).String()), keyEndReason.String(r.String())))
		}
	}
	return nil
}
