// Package otel reports the events of the lease, claim, lock and election
// packages as OpenTelemetry metrics and spans.
//
// New makes a Telemetry from a MeterProvider and a TracerProvider; its
// methods give the observers to pass to each package's WithObserver
// option. A lease service is best observed the cheap way: it counts its
// leases itself (lease.Service.Stats), ObserveService has the Telemetry
// read the counts when the metrics are collected, and the observer is
// given only the events the counts do not cover (LeaseEvents):
//
//	tel, err := otel.New(meterProvider, tracerProvider)
//	svc, err := lease.New(lease.WithObserverOf(tel.Lease(), otel.LeaseEvents), lease.WithTraceIDFunc(otel.TraceID))
//	err = tel.ObserveService(svc)
//	queue, err := claim.NewMemory(svc)
//	broker, err := claim.New(queue, claim.WithObserver(tel.Claim()))
//	manager, err := lock.NewManager(provider, lock.WithObserver(tel.Lock()))
//
// A service observed with lease.WithObserver(tel.Lease()) alone still
// works: the observer then counts the leases from every event, which
// costs each grant, renewal and ending an event.
//
// Each observer is a lease.Observer of its package's Event, so it joins
// others with lease.Observers: lock.WithObserver(lease.Observers(tel.Lock(),
// mine)) still wraps each holding in its span, and claim.WithObserver
// each handler likewise.
//
// The instruments are named in OpenTelemetry's semantic-convention style
// under the "lease." prefix; docs/observability.md lists them, with the
// overhead measured. The lease counts, the busiest, are read by
// asynchronous instruments when the metrics are collected, from the
// services' Stats (or, without ObserveService, from atomic counters the
// observer keeps). Lock names and item IDs go on spans, never on metrics,
// whose attributes are kept to small sets (purposes, reasons, codes,
// queues, outcomes).
//
// The module depends on the OpenTelemetry API only; an application picks
// the SDK and exporters.
package otel
