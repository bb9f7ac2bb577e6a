package otel

import (
	"context"
	"errors"
	"slices"
	"sync"
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

// LeaseEvents are the events the Lease observer needs once the services it
// observes are registered with ObserveService: expiries, for the lag
// histogram, and denials (the drops are always given). Pass them to
// lease.WithObserverOf; the grants, renewals and revocations then cost the
// service no event at all.
const LeaseEvents = lease.ExpireEvents | lease.DenyEvents

// purposeCounts are counts of one purpose.
type purposeCounts struct {
	active, granted, renewed atomic.Int64
	ended                    [3]atomic.Int64 // by EndReason (1 expired, 2 revoked)
}

// leaseObserver is the lease.Observer of a Telemetry. Until a service is
// registered (ObserveService), the frequent events only add to atomic
// counters, which collect reports; from then on, collect reports the
// registered services' Stats and the events add nothing to the counts.
type leaseObserver struct {
	counts [lease.MaxPurposes + 1]purposeCounts // by Purpose, from events
	// stats is set once a service is registered: the counts come from
	// the services' Stats, and the events no longer count.
	stats atomic.Bool

	mu       sync.Mutex
	services []*lease.Service // registered and not yet seen closed
	retired  []statCounts     // by Purpose: the final counts of the services seen closed

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
		metric.WithDescription("Audit decisions that skipped the audit observer because its buffer was full."),
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
	counted := o.stats.Load() // by the services themselves: the events add nothing
	switch e.Kind {
	case lease.EventGranted:
		if !counted {
			c.granted.Add(1)
			c.active.Add(1)
		}
	case lease.EventRenewed:
		if !counted {
			c.renewed.Add(1)
		}
	case lease.EventEnded:
		if !counted {
			c.ended[int(e.Reason)%len(c.ended)].Add(1)
			c.active.Add(-1)
		}
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

// statCounts are the counts of one purpose, as collect reports them.
type statCounts struct {
	active, granted, renewed int64
	ended                    [3]int64 // by EndReason (1 expired, 2 revoked)
	seen                     bool     // reported: the purpose had a lease here
}

// add adds a service's counts of one purpose.
func (c *statCounts) add(ps lease.PurposeStats) {
	c.active += int64(ps.Live)
	c.granted += int64(ps.Granted)
	c.renewed += int64(ps.Renewed)
	c.ended[lease.EndExpired] += int64(ps.Expired)
	c.ended[lease.EndRevoked] += int64(ps.Revoked)
	c.seen = true
}

// addStats adds every purpose of st to counts, indexed by Purpose, and
// returns counts, grown as needed.
func addStats(counts []statCounts, st lease.Stats) []statCounts {
	for _, ps := range st.Purposes {
		if n := int(ps.Purpose) + 1; n > len(counts) {
			counts = append(counts, make([]statCounts, n-len(counts))...)
		}
		counts[ps.Purpose].add(ps)
	}
	return counts
}

// observeService registers svc's counts (see Telemetry.ObserveService).
func (o *leaseObserver) observeService(svc *lease.Service) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if slices.Contains(o.services, svc) {
		return
	}
	o.services = append(o.services, svc)
	o.stats.Store(true)
}

// forget lets go of the registered services, once the Telemetry is closed.
func (o *leaseObserver) forget() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.services = nil
}

// statsCounts returns the sums, by Purpose, of the registered services'
// Stats. A service seen closed has its final counts kept in retired, and
// is let go of. Stats is read without o.mu held: it settles what is due and
// delivers the service's notifications on this goroutine, and a hook or
// subscriber may call back into the Telemetry.
func (o *leaseObserver) statsCounts() []statCounts {
	o.mu.Lock()
	services := slices.Clone(o.services)
	o.mu.Unlock()
	type read struct {
		svc    *lease.Service
		st     lease.Stats
		closed bool
	}
	reads := make([]read, len(services))
	for i, svc := range services {
		select {
		case <-svc.Done():
			reads[i].closed = true // before Stats: the counts read are final
		default:
		}
		reads[i].svc, reads[i].st = svc, svc.Stats()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range reads {
		// A service another collection retired meanwhile, or that Close
		// let go of, is no longer registered: its counts are in retired.
		if i := slices.Index(o.services, r.svc); i >= 0 && r.closed {
			o.services = slices.Delete(o.services, i, i+1)
			o.retired = addStats(o.retired, r.st)
		}
	}
	counts := append([]statCounts(nil), o.retired...)
	for _, r := range reads {
		if !r.closed && slices.Contains(o.services, r.svc) {
			counts = addStats(counts, r.st)
		}
	}
	return counts
}

// eventCounts returns the counts kept from events, by Purpose.
func (o *leaseObserver) eventCounts() []statCounts {
	var counts []statCounts
	for p := range o.counts {
		c := &o.counts[p]
		granted, renewed := c.granted.Load(), c.renewed.Load()
		if granted == 0 && renewed == 0 {
			continue // never granted here: nothing to report
		}
		if len(counts) <= p {
			counts = append(counts, make([]statCounts, p+1-len(counts))...)
		}
		counts[p] = statCounts{active: c.active.Load(), granted: granted, renewed: renewed, seen: true,
			ended: [3]int64{lease.EndExpired: c.ended[lease.EndExpired].Load(), lease.EndRevoked: c.ended[lease.EndRevoked].Load()}}
	}
	return counts
}

// collect reports the counts of every purpose seen: the registered
// services' if there are any, else those kept from events.
func (o *leaseObserver) collect(_ context.Context, obs metric.Observer) error {
	var counts []statCounts
	if o.stats.Load() {
		counts = o.statsCounts()
	} else {
		counts = o.eventCounts()
	}
	for p := range counts {
		c := &counts[p]
		if !c.seen {
			continue
		}
		name := keyPurpose.String(lease.Purpose(p).String())
		purpose := metric.WithAttributes(name)
		obs.ObserveInt64(o.active, c.active, purpose)
		obs.ObserveInt64(o.granted, c.granted, purpose)
		obs.ObserveInt64(o.renewed, c.renewed, purpose)
		for _, r := range []lease.EndReason{lease.EndExpired, lease.EndRevoked} {
			obs.ObserveInt64(o.ended, c.ended[r], metric.WithAttributes(name, keyEndReason.String(r.String())))
		}
	}
	return nil
}

// errNilService is ObserveService's error for a nil service.
var errNilService = errors.New("otel: ObserveService: nil service")
