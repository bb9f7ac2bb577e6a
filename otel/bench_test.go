package otel_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/otel"
)

// services returns, on the system clock, a service without an observer
// ("none"), one with an audit sink that does nothing ("sink", the cost of
// the notification delivery the observer shares), one with an observer
// that does nothing ("noop") and one observed by a Telemetry on the SDK
// ("otel"), for the overhead benchmarks.
func services(b *testing.B) map[string]*lease.Service {
	b.Helper()
	tel, err := otel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		sdktrace.NewTracerProvider())
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]*lease.Service{
		"none": lease.New(),
		"otel": lease.New(lease.WithObserver(tel.Lease())),
		"noop": lease.New(lease.WithObserver(lease.ObserverFunc(func(lease.Event) {}))),
		"sink": lease.New(lease.WithAuditSink(func(lease.Decision) {})),
	}
	b.Cleanup(func() {
		for _, s := range out {
			_ = s.Close()
		}
		_ = tel.Close()
	})
	return out
}

func BenchmarkGrantRevoke(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"none", "sink", "noop", "otel"} {
		b.Run(name, func(b *testing.B) {
			svc := services(b)[name]
			b.ReportAllocs()
			for b.Loop() {
				l, err := svc.Grant(ctx, "holder", lease.Operation, time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := svc.Revoke(ctx, l.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkUse(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"none", "sink", "noop", "otel"} {
		b.Run(name, func(b *testing.B) {
			svc := services(b)[name]
			l, err := svc.Grant(ctx, "holder", lease.Operation, time.Hour)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := svc.Use(ctx, l.ID, lease.Operation); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
