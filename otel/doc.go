// Package otel reports the events of the lease, claim, lock and election
// packages as OpenTelemetry metrics and spans.
//
// New makes a Telemetry from a MeterProvider and a TracerProvider; its
// methods give the observers to pass to each package's WithObserver
// option:
//
//	tel, err := otel.New(meterProvider, tracerProvider)
//	svc := lease.New(lease.WithObserver(tel.Lease()), lease.WithTraceIDFunc(otel.TraceID))
//	broker := claim.New(claim.NewMemory(svc), claim.WithObserver(tel.Claim()))
//	manager, err := lock.NewManager(provider, lock.WithObserver(tel.Lock()))
//
// The instruments are named in OpenTelemetry's semantic-convention style
// under the "lease." prefix; docs/observability.md lists them, with the
// overhead measured. The counts of the lease service, its busiest source,
// are kept in atomic counters and read by asynchronous instruments when
// the metrics are collected, so the observer's own work for a grant is a
// few atomic additions. Lock names and item
// IDs go on spans, never on metrics, whose attributes are kept to small
// sets (purposes, reasons, codes, queues, outcomes).
//
// The module depends on the OpenTelemetry API only; an application picks
// the SDK and exporters.
package otel
