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
	observer := lease.ObserverFunc[lease.Event](func(e lease.Event) {
		switch e.Kind {
		case lease.EventEnded:
			fmt.Printf("lease %d (%s) %s, lag %s\n", e.LeaseID, e.Purpose, e.Reason, e.Lag)
		case lease.EventDenied:
			fmt.Printf("%s of lease %d denied: %s\n", e.Action, e.LeaseID, e.Code)
		default:
			fmt.Printf("lease %d (%s) %s\n", e.LeaseID, e.Purpose, e.Kind)
		}
	})
	svc := lease.Must(lease.New(lease.WithClock(clock), lease.WithObserver(observer)))
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

// An observer of the rare events only, next to the counts the service
// keeps: the grants, renewals and revocations cost it nothing.
func ExampleWithObserverOf() {
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	observer := lease.ObserverFunc[lease.Event](func(e lease.Event) {
		fmt.Printf("lease %d (%s) %s %s\n", e.LeaseID, e.Purpose, e.Kind, e.Reason)
	})
	svc := lease.Must(lease.New(lease.WithClock(clock), lease.WithObserverOf(observer, lease.ExpireEvents|lease.DenyEvents)))
	defer svc.Close()

	ctx := context.Background()
	a, _ := svc.Grant(ctx, "worker-1", lease.Operation, 10*time.Second)
	b, _ := svc.Grant(ctx, "worker-2", lease.StateWrite, 10*time.Second)
	_, _ = svc.Renew(ctx, a.ID)
	_, _ = svc.Revoke(ctx, b.ID)
	clock.Advance(10 * time.Second)

	st := svc.Stats()
	fmt.Printf("live %d, granted %d, renewed %d, revoked %d, expired %d\n",
		st.Live, st.Granted, st.Renewed, st.Revoked, st.Expired)
	// Output:
	// lease 1 (operation) ended expired
	// live 0, granted 2, renewed 1, revoked 1, expired 1
}
