package lock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

func ExampleManager_TryLock() {
	svc := lease.New()
	defer svc.Close()
	m, err := lock.NewManager(lock.NewMemory(svc))
	if err != nil {
		fmt.Println(err)
		return
	}

	acquired, err := m.TryLock(context.Background(), "nightly-report", func(ctx context.Context, l lock.Lease) error {
		fmt.Println("generating the report under token", l.Token)
		return nil
	})
	fmt.Println(acquired, err)
	// Output:
	// generating the report under token 1
	// true <nil>
}

func ExampleDo() {
	svc := lease.New()
	defer svc.Close()
	m, err := lock.NewManager(lock.NewMemory(svc))
	if err != nil {
		fmt.Println(err)
		return
	}

	r, err := lock.Do(context.Background(), m, "counter", func(ctx context.Context, l lock.Lease) (int, error) {
		return 42, nil
	})
	fmt.Printf("%+v %v\n", r, err)
	// Output:
	// {Acquired:true Value:42} <nil>
}

// A Manager's context tells the function when its lock is lost.
func ExampleManager_TryLock_lost() {
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := lease.New(lease.WithClock(clock))
	defer svc.Close()
	// The Manager counts on the Memory's time: its service's clock.
	m, err := lock.NewManager(lock.NewMemory(svc), lock.WithLeaseDuration(30*time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}

	_, err = m.TryLock(context.Background(), "job", func(ctx context.Context, l lock.Lease) error {
		_, _ = svc.Revoke(ctx, lease.ID(l.Token)) // someone breaks the lock
		clock.Advance(10 * time.Second)           // the next renewal finds out
		fmt.Println("cause:", context.Cause(ctx))
		return ctx.Err()
	})
	fmt.Println(errors.Is(err, lock.ErrLockLost))
	// Output:
	// cause: lock: lock lost [LS_LOCK_LOST]
	// true
}

func ExampleFence() {
	var f lock.Fence
	fmt.Println(f.Check("db", 7)) // the current holder writes
	fmt.Println(f.Check("db", 7)) // and again
	fmt.Println(f.Check("db", 8)) // a new holder took over
	err := f.Check("db", 7)       // the old holder wakes up
	fmt.Println(errors.Is(err, lock.ErrStaleToken), err)
	// Output:
	// <nil>
	// <nil>
	// <nil>
	// true lock: stale fencing token 7 for "db" (seen 8) [LS_STALE_TOKEN]
}

// With a lock-delay, a lock whose holder stopped renewing stays unavailable
// for a while after the expiry, so that holder's in-flight writes land
// before the next holder starts.
func ExampleWithLockDelay() {
	ctx := context.Background()
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := lease.New(lease.WithClock(clock))
	defer svc.Close()
	mem := lock.NewMemory(svc, lock.WithLockDelay(5*time.Second))

	_, _ = mem.Acquire(ctx, "job", "a", 10*time.Second)
	clock.Advance(12 * time.Second) // a's lease expired 2 s ago
	l, _ := mem.Acquire(ctx, "job", "b", 10*time.Second)
	fmt.Println("at 12 s:", l != nil)
	clock.Advance(3 * time.Second)
	l, _ = mem.Acquire(ctx, "job", "b", 10*time.Second)
	fmt.Println("at 15 s:", l != nil)
	// Output:
	// at 12 s: false
	// at 15 s: true
}

// Lock waits for a lock held elsewhere and runs as soon as it is released;
// Holder tells who holds it, and what the holder attached with WithValue.
func ExampleManager_Lock() {
	ctx := context.Background()
	svc := lease.New()
	defer svc.Close()
	mem := lock.NewMemory(svc)
	m, err := lock.NewManager(mem, lock.WithExecutionID("worker-2"), lock.WithValue([]byte("10.0.0.2")))
	if err != nil {
		fmt.Println(err)
		return
	}
	held, _ := mem.Acquire(ctx, "migrations", "worker-1", time.Minute)

	done := make(chan error)
	go func() {
		done <- m.Lock(ctx, "migrations", func(ctx context.Context, l lock.Lease) error {
			h, _, _ := mem.Holder(ctx, "migrations")
			fmt.Printf("%s (%s) migrates under token %d\n", h.ExecutionID, h.Value, l.Token)
			return nil
		})
	}()
	h, _, _ := mem.Holder(ctx, "migrations")
	fmt.Println("held by", h.ExecutionID)
	_ = mem.Release(ctx, []lock.Lease{*held})
	fmt.Println(<-done)
	// Output:
	// held by worker-1
	// worker-2 (10.0.0.2) migrates under token 2
	// <nil>
}
