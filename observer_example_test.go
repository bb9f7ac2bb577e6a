package lease_test

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

func ExampleWithObserver() {
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	observer := lease.ObserverFunc(func(e lease.Event) {
		switch e.Kind {
		case lease.EventEnded:
			fmt.Printf("lease %d (%s) %s, lag %s\n", e.LeaseID, e.Purpose, e.Reason, e.Lag)
		case lease.EventDenied:
			fmt.Printf("%s of lease %d denied: %s\n", e.Action, e.LeaseID, e.Code)
		default:
			fmt.Printf("lease %d (%s) %s\n", e.LeaseID, e.Purpose, e.Kind)
		}
	})
	svc := lease.New(lease.WithClock(clock), lease.WithObserver(observer))
	defer svc.Close()

	ctx := context.Background()
	l, _ := svc.Grant(ctx, "worker-1", lease.Operation, 10*time.Second)
	_, _ = svc.Use(ctx, l.ID, lease.StateWrite)
	_, _ = svc.Renew(ctx, l.ID)
	clock.Advance(10 * time.Second)
	// Output:
	// lease 1 (operation) granted
	// use of lease 1 denied: LS_PURPOSE_MISMATCH
	// lease 1 (operation) renewed
	// lease 1 (operation) expired, lag 0s
}
