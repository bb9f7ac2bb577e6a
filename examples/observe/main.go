// Command observe is a small service that exports the metrics of a lease
// service, a claim broker and a lock manager to Prometheus, through
// OpenTelemetry's Prometheus exporter, and serves the operator console
// (read-only).
//
//	go run ./examples/observe -addr 127.0.0.1:8080
//	curl 127.0.0.1:8080/metrics
//	open http://127.0.0.1:8080/debug/lease/
//
// The console shows holders, keys, payloads and audit reasons: a real
// service mounts it behind its own authentication.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/console"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/otel"
)

// Queue is the queue the service works.
const Queue = "mail"

// App is the service: a lease service, a broker and a lock manager on it,
// observed, and the HTTP handler serving /metrics and /debug/lease. Its
// methods are safe for concurrent use; Close it once.
type App struct {
	Service *lease.Service
	Broker  *claim.Broker
	Locks   *lock.Memory
	Manager *lock.Manager
	Handler http.Handler

	tel *otel.Telemetry
	mp  *sdkmetric.MeterProvider
}

// NewApp builds the service on clock (lease.SystemClock() in production, a
// fake clock in tests).
func NewApp(clock lease.Clock) (*App, error) {
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	// This example exports metrics only; a real service passes its
	// TracerProvider to get spans of handlers and lock holdings.
	tel, err := otel.New(mp, noop.NewTracerProvider())
	if err != nil {
		return nil, errors.Join(err, mp.Shutdown(context.Background()))
	}
	// The service counts its leases and the Telemetry reads the counts
	// when Prometheus scrapes: the observer is given only the events the
	// counts leave out, so grants, renewals and revocations cost no event.
	svc, err := lease.New(lease.WithClock(clock), lease.WithObserverOf(tel.Lease(), otel.LeaseEvents),
		lease.WithTraceIDFunc(otel.TraceID))
	if err != nil {
		return nil, errors.Join(err, mp.Shutdown(context.Background()))
	}
	if err := tel.ObserveService(svc); err != nil {
		return nil, errors.Join(err, svc.Close(), mp.Shutdown(context.Background()))
	}
	locks, err := lock.NewMemory(svc)
	var manager *lock.Manager
	if err == nil {
		manager, err = lock.NewManager(locks, lock.WithObserver(tel.Lock()))
	}
	recorder := console.NewRecorder(svc.Clock())
	var queues *claim.Memory
	if err == nil {
		queues, err = claim.NewMemory(svc)
	}
	var broker *claim.Broker
	if err == nil {
		// The console's charts and the metrics watch the same claims.
		broker, err = claim.New(queues, claim.WithObserver(lease.Observers(tel.Claim(), recorder)))
		if err != nil {
			_ = queues.Close()
		}
	}
	if err != nil {
		return nil, errors.Join(err, svc.Close(), mp.Shutdown(context.Background()))
	}

	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ops, err := console.New(console.Config{
		Service: svc, Locks: locks, Broker: broker, Recorder: recorder, Queues: []string{Queue},
	})
	if err != nil {
		return nil, errors.Join(err, broker.Close(), svc.Close(), mp.Shutdown(context.Background()))
	}
	mux.Handle("/debug/lease/", http.StripPrefix("/debug/lease", ops))
	return &App{Service: svc, Broker: broker, Locks: locks, Manager: manager, Handler: mux, tel: tel, mp: mp}, nil
}

// Close stops the broker, the service and the metrics.
func (a *App) Close() error {
	return errors.Join(a.Broker.Close(), a.Service.Close(), a.tel.Close(), a.mp.Shutdown(context.Background()))
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve /metrics and /debug/lease on")
	flag.Parse()
	if err := run(*addr); err != nil {
		log.Fatal(err)
	}
}

// run serves on addr until SIGINT or SIGTERM, with some work to watch: a
// worker on the queue, and every five seconds an item enqueued and a job
// run under a lock.
func run(addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app, err := NewApp(lease.SystemClock())
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = app.Broker.Work(ctx, claim.Worker{Queue: Queue, Owner: "worker-1",
			Handler: func(context.Context, claim.Claim) error { return nil }})
	})
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				_, _ = app.Broker.Enqueue(ctx, Queue, []byte("hello"))
				_, _ = app.Manager.TryLock(ctx, "report", func(context.Context, lock.Lease) error { return nil })
			}
		}
	})
	srv := &http.Server{Addr: addr, Handler: app.Handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe() }()
	log.Printf("serving /metrics and /debug/lease on %s", addr)
	select {
	case err = <-served:
	case <-ctx.Done():
		err = srv.Shutdown(context.Background())
	}
	stop()
	wg.Wait()
	return errors.Join(err, app.Close())
}
