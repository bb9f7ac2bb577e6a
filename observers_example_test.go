package lease_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// Two consumers of the same events, a counter and a printer, share one
// WithObserver.
func ExampleObservers() {
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ended := 0
	count := lease.ObserverFunc[lease.Event](func(e lease.Event) {
		if e.Kind == lease.EventEnded {
			ended++
		}
	})
	print := lease.ObserverFunc[lease.Event](func(e lease.Event) {
		fmt.Printf("lease %d %s\n", e.LeaseID, e.Kind)
	})
	svc := lease.Must(lease.New(lease.WithClock(clock), lease.WithObserver(lease.Observers(count, print))))
	defer svc.Close()

	ctx := context.Background()
	a, _ := svc.Grant(ctx, "worker-1", lease.Operation, 10*time.Second)
	_, _ = svc.Grant(ctx, "worker-2", lease.Operation, 10*time.Second)
	_, _ = svc.Revoke(ctx, a.ID)
	clock.Advance(10 * time.Second)
	fmt.Println("ended:", ended)
	// Output:
	// lease 1 granted
	// lease 2 granted
	// lease 1 ended
	// lease 2 ended
	// ended: 2
}

// The audit trail logged as it is made: the endings at Info and the
// denials at Warn, the routine grants and uses at Debug, which this
// logger leaves out.
func ExampleSlogObserver() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelInfo,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && a.Value.Kind() == slog.KindTime {
				return slog.Attr{} // the record's wall time: left out for a stable output
			}
			return a
		},
	}))
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := lease.Must(lease.New(lease.WithClock(clock), lease.WithAuditObserver(lease.SlogObserver(logger))))
	defer svc.Close()

	ctx := lease.WithTraceID(context.Background(), "req-7")
	l, _ := svc.Grant(ctx, "worker-1", lease.Operation, 10*time.Second)
	_, _ = svc.Use(ctx, l.ID, lease.Operation)
	_, _ = svc.Use(ctx, l.ID, lease.StateWrite)
	_, _ = svc.Revoke(ctx, l.ID)
	// Output:
	// level=WARN msg="lease decision" decision.lease_id=1 decision.action=use decision.allowed=false decision.code=LS_PURPOSE_MISMATCH decision.reason="granted for operation, used for state_write" decision.holder=worker-1 decision.timestamp=2026-01-01T00:00:00.000Z decision.revision=1 decision.trace_id=req-7
	// level=INFO msg="lease decision" decision.lease_id=1 decision.action=revoke decision.allowed=true decision.reason=revoked decision.holder=worker-1 decision.timestamp=2026-01-01T00:00:00.000Z decision.revision=2 decision.trace_id=req-7
}
