package otel_test

import (
	"context"
	"fmt"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/otel"
)

func Example() {
	reader := sdkmetric.NewManualReader() // in production: an exporter's reader
	meterProvider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tracerProvider := sdktrace.NewTracerProvider()
	tel, err := otel.New(meterProvider, tracerProvider)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tel.Close()

	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	// The service counts its leases itself, and the Telemetry reads the
	// counts when it collects: the observer needs only LeaseEvents.
	svc := lease.Must(lease.New(lease.WithClock(clock), lease.WithObserverOf(tel.Lease(), otel.LeaseEvents),
		lease.WithTraceIDFunc(otel.TraceID)))
	defer svc.Close()
	err = tel.ObserveService(svc)
	if err != nil {
		fmt.Println(err)
		return
	}
	broker := lease.Must(claim.New(lease.Must(claim.NewMemory(svc)), claim.WithObserver(tel.Claim())))
	defer broker.Close()
	manager, err := lock.NewManager(lease.Must(lock.NewMemory(svc)), lock.WithObserver(tel.Lock()))
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	_, _ = svc.Grant(ctx, "worker-1", lease.Operation, time.Minute)
	_, _ = broker.Enqueue(ctx, "mail", []byte("hello"))
	_, _ = manager.TryLock(ctx, "report", func(context.Context, lock.Lease) error { return nil })

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(ctx, &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "lease.leases.granted" {
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				purpose, _ := dp.Attributes.Value("lease.purpose")
				fmt.Println(m.Name, purpose.AsString(), dp.Value)
			}
		}
	}
	// Unordered output:
	// lease.leases.granted operation 2
}
