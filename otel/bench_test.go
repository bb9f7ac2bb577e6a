package otel_test

import (
	"context"
	"slices"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/otel"
)

// services returns, on the system clock, a service without an observer
// ("none"), one with an audit sink that does nothing ("sink", the cost of
// the notification delivery the observer shares), one with an observer
// that does nothing ("noop"), one observed by a Telemetry on the SDK that
// counts from every event ("otel-events") and one whose counts the
// Telemetry reads from Stats, its observer given LeaseEvents only
// ("otel"), for the overhead benchmarks.
func services(b *testing.B) map[string]*lease.Service {
	b.Helper()
	reader := sdkmetric.NewManualReader()
	tel, err := otel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), sdktrace.NewTracerProvider())
	if err != nil {
		b.Fatal(err)
	}
	events, err := otel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		sdktrace.NewTracerProvider())
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]*lease.Service{
		"none":        lease.Must(lease.New()),
		"otel":        lease.Must(lease.New(lease.WithObserverOf(tel.Lease(), otel.LeaseEvents))),
		"otel-events": lease.Must(lease.New(lease.WithObserver(events.Lease()))),
		"noop":        lease.Must(lease.New(lease.WithObserver(lease.ObserverFunc[lease.Event](func(lease.Event) {})))),
		"sink":        lease.Must(lease.New(lease.WithAuditObserver(lease.ObserverFunc[lease.Decision](func(lease.Decision) {})))),
	}
	if err := tel.ObserveService(out["otel"]); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		// Collected once, so that the benchmark covers a working setup.
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			b.Errorf("collect: %v", err)
		}
		for _, s := range out {
			_ = s.Close()
		}
		_ = tel.Close()
		_ = events.Close()
	})
	return out
}

var variants = []string{"none", "sink", "noop", "otel-events", "otel"}

func BenchmarkGrantRevoke(b *testing.B) {
	ctx := context.Background()
	for _, name := range variants {
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
	for _, name := range variants {
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

// BenchmarkMetricsOverhead measures what the metrics add to a grant and
// revoke, and to a Use, on a shared machine: it alternates chunks of
// operations on a service without metrics ("none") and one with them
// ("otel", the counts read from Stats and the observer given LeaseEvents;
// "otel-events" for the observer counting from every event), and reports
// the median chunk of each (plain-ns/op, metrics-ns/op) and their ratio
// (overhead-%). Alternating every few microseconds puts both under the
// same load, which separate benchmarks run seconds apart do not. Its ns/op
// counts both services.
func BenchmarkMetricsOverhead(b *testing.B) {
	ctx := context.Background()
	grantRevoke := func(s *lease.Service, _ lease.ID) {
		l, err := s.Grant(ctx, "h", lease.Operation, time.Hour)
		if err == nil {
			_, err = s.Revoke(ctx, l.ID)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	use := func(s *lease.Service, id lease.ID) {
		if _, err := s.Use(ctx, id, lease.Operation); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name, variant string
		op            func(*lease.Service, lease.ID)
	}{
		{"grant-revoke", "otel", grantRevoke},
		{"use", "otel", use},
		{"grant-revoke-events", "otel-events", grantRevoke},
		{"use-events", "otel-events", use},
	} {
		b.Run(bc.name, func(b *testing.B) {
			svcs := services(b)
			plain, metered := svcs["none"], svcs[bc.variant]
			pl, err := plain.Grant(ctx, "h", lease.Operation, time.Hour)
			if err != nil {
				b.Fatal(err)
			}
			ml, err := metered.Grant(ctx, "h", lease.Operation, time.Hour)
			if err != nil {
				b.Fatal(err)
			}
			p, m := alternate(b, func() { bc.op(plain, pl.ID) }, func() { bc.op(metered, ml.ID) })
			b.ReportMetric(p, "plain-ns/op")
			b.ReportMetric(m, "metrics-ns/op")
			b.ReportMetric(100*(m-p)/p, "overhead-%")
		})
	}
}

// alternate runs a chunk of calls of x then one of y for every chunk
// iterations of b.Loop, and returns the median time of a call of each.
func alternate(b *testing.B, x, y func()) (float64, float64) {
	const chunk = 64
	timed := func(f func()) time.Duration {
		start := time.Now()
		for range chunk {
			f()
		}
		return time.Since(start)
	}
	var xs, ys []time.Duration
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%chunk == 0 {
			xs = append(xs, timed(x))
			ys = append(ys, timed(y))
		}
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / chunk
	}
	return median(xs), median(ys)
}
