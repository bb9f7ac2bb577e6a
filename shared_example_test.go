package lease_test

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

// One panic handler, written once, for a Service, a lock Manager and a
// claim Broker; each package's own options stay its own.
func ExampleSharedOption() {
	clk := leasetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	onPanic := lease.WithPanicHandler(func(p *lease.PanicError) {
		fmt.Println("recovered:", p.Callback, p.Value)
	})
	svc := lease.Must(lease.New(lease.WithClock(clk), onPanic))
	defer svc.Close()

	failing := lock.ObserverFunc(func(e lock.Event) { panic("lock observer failed on " + e.Kind.String()) })
	mgr := lease.Must(lock.NewManager(lease.Must(lock.NewMemory(svc)), onPanic, lock.WithObserver(failing)))
	b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc)), onPanic, claim.WithMaxAttempts(3)))
	defer b.Close()

	ctx := context.Background()
	_, _ = mgr.TryLock(ctx, "report", func(context.Context, lock.Lease) error { return nil })
	_, _ = b.Enqueue(ctx, "mail", []byte("hello"))
	// Output:
	// recovered: observer lock observer failed on acquired
	// recovered: observer lock observer failed on released
}
