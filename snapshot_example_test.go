package lease_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// ExampleRestore saves a service's state and brings it back in a new
// service, as a process does across a restart: the time spent down counts
// against the leases.
func ExampleRestore() {
	ctx := context.Background()
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := lease.Must(lease.New(lease.WithClock(clock)))
	short, _ := svc.GrantWithKey(ctx, "worker-1", lease.Operation, 10*time.Second, "jobs/7", []byte("running"))
	long, _ := svc.Grant(ctx, "worker-2", lease.Operation, time.Hour)

	// Before stopping: take the state and write it out.
	snap, err := svc.Snapshot()
	if err != nil {
		panic(err)
	}
	var file bytes.Buffer // a file, in a real program
	if _, err := snap.WriteTo(&file); err != nil {
		panic(err)
	}
	_ = svc.Close()

	// A minute later: read it back and restore.
	clock.Advance(time.Minute)
	snap, err = lease.ReadSnapshot(&file)
	if err != nil {
		panic(err)
	}
	svc, err = lease.Restore(snap, lease.WithClock(clock))
	if err != nil {
		panic(err)
	}
	defer svc.Close()

	_, err = svc.Renew(ctx, short.ID)
	fmt.Println("short lease:", lease.CodeOf(err))
	_, _, found, _ := svc.Get(ctx, "jobs/7")
	fmt.Println("its key still there:", found)
	l, _ := svc.Info(ctx, long.ID)
	fmt.Println("long lease left:", l.Remaining(clock.Now()))
	// Output:
	// short lease: LS_EXPIRED
	// its key still there: false
	// long lease left: 59m0s
}
