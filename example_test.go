package lease_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// The examples run on a fake clock so their output is exact; a real program
// would call lease.New() without WithClock.

// Example is the README's first sample: a lease with a key, kept alive while
// work runs, checked before each write, and its key gone once it ends.
func Example() {
	clk := leasetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	svc, err := lease.New(lease.WithClock(clk)) // lease.New() in a real program
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close()
	ctx := context.Background()

	l, err := svc.Grant(ctx, "worker-1", lease.StateWrite, 10*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Deleted, atomically, when the lease expires or is revoked.
	_ = svc.Put(ctx, "jobs/42/owner", []byte("worker-1"), l.ID)

	// Renewed every TTL/3 until work is done; alive is done (context.Cause
	// says why) if the lease ends first.
	work, stop := context.WithCancel(ctx)
	defer stop()
	alive, err := svc.KeepAlive(work, l.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	clk.Advance(time.Minute) // kept alive: still ours
	if _, err := svc.Use(ctx, l.ID, lease.StateWrite); err == nil {
		fmt.Println("writing as lease", l.ID)
	}

	stop()         // renewals stop; the lease runs out 10s after the last one
	<-alive.Done() // the service has let go: no renewal can follow
	clk.Advance(10 * time.Second)
	if _, err := svc.Use(ctx, l.ID, lease.StateWrite); errors.Is(err, lease.ErrStaleUse) {
		fmt.Println("stop writing:", lease.CodeOf(err))
	}
	_, _, held, _ := svc.Get(ctx, "jobs/42/owner")
	fmt.Println("key held:", held, "- alive done:", alive.Err() != nil)
	// Output:
	// writing as lease 1
	// stop writing: LS_STALE_USE
	// key held: false - alive done: true
}

func ExampleService_Grant() {
	clk := leasetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	s := lease.Must(lease.New(lease.WithClock(clk)))
	defer s.Close()

	l, err := s.Grant(context.Background(), "worker-1", lease.StateWrite, 30*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.ID, l.Holder, l.Purpose, l.TTL)
	fmt.Println("expires at", l.ExpiresAt.Format(time.TimeOnly))

	// Bad input is refused with a code naming the field; nothing changes.
	_, err = s.Grant(context.Background(), "", lease.StateWrite, 30*time.Second)
	fmt.Println(err)
	// Output:
	// 1 worker-1 state_write 30s
	// expires at 09:00:30
	// lease: grant holder: must not be empty [LS_INVALID_ARGUMENT]
}

func ExampleService_Renew() {
	clk := leasetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	s := lease.Must(lease.New(lease.WithClock(clk)))
	defer s.Close()
	ctx := context.Background()

	l, _ := s.Grant(ctx, "worker-1", lease.Operation, 10*time.Second)
	clk.Advance(8 * time.Second)
	l, _ = s.Renew(ctx, l.ID) // now+TTL
	fmt.Println("renewed, expires at", l.ExpiresAt.Format(time.TimeOnly))

	clk.Advance(10 * time.Second) // a full TTL without renewal
	_, err := s.Renew(ctx, l.ID)
	fmt.Println(errors.Is(err, lease.ErrExpired), lease.CodeOf(err))
	// Output:
	// renewed, expires at 09:00:18
	// true LS_EXPIRED
}

func ExampleService_Use() {
	clk := leasetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	s := lease.Must(lease.New(lease.WithClock(clk)))
	defer s.Close()
	ctx := context.Background()

	l, _ := s.Grant(ctx, "worker-1", lease.Operation, time.Minute)
	if _, err := s.Use(ctx, l.ID, lease.Operation); err == nil {
		fmt.Println("operation allowed")
	}

	// A lease granted for one purpose cannot be used for another.
	_, err := s.Use(ctx, l.ID, lease.StateWrite)
	var le *lease.Error
	if errors.As(err, &le) && le.Code == lease.CodePurposeMismatch {
		fmt.Printf("refused: granted for %s, asked for %s\n", le.Actual, le.Expected)
	}
	fmt.Println(err)
	// Output:
	// operation allowed
	// refused: granted for operation, asked for state_write
	// lease: use lease 1 granted for operation, used for state_write [LS_PURPOSE_MISMATCH]
}

func ExampleService_Revoke() {
	clk := leasetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	s := lease.Must(lease.New(lease.WithClock(clk)))
	defer s.Close()
	ctx := context.Background()

	l, _ := s.Grant(ctx, "worker-1", lease.StateWrite, time.Minute)
	_ = s.Put(ctx, "jobs/7/owner", []byte("worker-1"), l.ID)
	_ = s.Put(ctx, "jobs/7/state", []byte("running"), l.ID)
	_ = s.Put(ctx, "jobs/8/state", []byte("queued"), 0) // belongs to no lease

	ended, _ := s.Revoke(ctx, l.ID)
	fmt.Println("deleted:", ended.Keys)
	kvs, _ := s.Scan(ctx, "jobs/", 0)
	for _, kv := range kvs {
		fmt.Println("left:", kv.Key)
	}

	_, err := s.Revoke(ctx, l.ID)
	fmt.Println(lease.CodeOf(err))
	// Output:
	// deleted: [jobs/7/owner jobs/7/state]
	// left: jobs/8/state
	// LS_ALREADY_REVOKED
}

func ExampleService_KeepAlive() {
	clk := leasetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	s := lease.Must(lease.New(lease.WithClock(clk)))
	defer s.Close()

	l, _ := s.Grant(context.Background(), "worker-1", lease.Operation, 3*time.Second)
	parent, stop := context.WithCancel(context.Background())
	alive, _ := s.KeepAlive(parent, l.ID)

	// The service renews the lease every TTL/3 on its own clock.
	clk.Advance(time.Minute) // twenty TTLs
	l, err := s.Info(ctx, l.ID)
	fmt.Println("after a minute:", err == nil, "expires at", l.ExpiresAt.Format(time.TimeOnly))

	// Cancelling the parent stops the renewals; the lease is left to expire.
	stop()
	<-alive.Done()
	fmt.Println("keep-alive ended:", context.Cause(alive))
	clk.Advance(3 * time.Second) // one TTL after the last renewal
	_, err = s.Info(ctx, l.ID)
	fmt.Println(lease.CodeOf(err))

	// A lease kept alive ends its keep-alive when it ends.
	l2, _ := s.Grant(context.Background(), "worker-2", lease.Operation, 3*time.Second)
	alive2, _ := s.KeepAlive(context.Background(), l2.ID)
	_, _ = s.Revoke(context.Background(), l2.ID)
	<-alive2.Done()
	fmt.Println("keep-alive ended:", errors.Is(context.Cause(alive2), lease.ErrAlreadyRevoked))
	// Output:
	// after a minute: true expires at 09:01:03
	// keep-alive ended: context canceled
	// LS_EXPIRED
	// keep-alive ended: true
}

func ExampleService_Put() {
	clk := leasetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	s := lease.Must(lease.New(lease.WithClock(clk)))
	defer s.Close()
	ctx := context.Background()

	l, _ := s.Grant(ctx, "worker-1", lease.StateWrite, 10*time.Second)
	_ = s.Put(ctx, "config/leader", []byte("worker-1"), l.ID)

	v, id, ok, _ := s.Get(ctx, "config/leader")
	fmt.Printf("%s %d %v\n", v, id, ok)

	// The key goes with its lease, at the exact instant it expires.
	clk.Advance(10*time.Second - time.Nanosecond)
	_, _, ok, _ = s.Get(ctx, "config/leader")
	fmt.Println("just before expiry:", ok)
	clk.Advance(time.Nanosecond)
	_, _, ok, _ = s.Get(ctx, "config/leader")
	fmt.Println("at expiry:", ok)

	// Attaching a key to an ended lease is refused.
	fmt.Println(s.Put(ctx, "config/leader", []byte("worker-1"), l.ID))
	// Output:
	// worker-1 1 true
	// just before expiry: true
	// at expiry: false
	// lease: put lease 1 key "config/leader" lease expired [LS_EXPIRED]
}

func ExampleService_Scan() {
	s := lease.Must(lease.New(lease.WithClock(leasetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)))))
	defer s.Close()
	ctx := context.Background()

	l, _ := s.Grant(ctx, "worker-1", lease.StateWrite, time.Minute)
	for _, k := range []string{"jobs/3", "jobs/1", "queue/1", "jobs/2"} {
		_ = s.Put(ctx, k, []byte("v-"+k), l.ID)
	}
	kvs, _ := s.Scan(ctx, "jobs/", 0)
	for _, kv := range kvs { // in key order
		fmt.Println(kv.Key, string(kv.Value), kv.LeaseID)
	}
	two, _ := s.Scan(ctx, "jobs/", 2)
	all, _ := s.Scan(ctx, "", 0)
	fmt.Println(len(two), len(all))
	// Output:
	// jobs/1 v-jobs/1 1
	// jobs/2 v-jobs/2 1
	// jobs/3 v-jobs/3 1
	// 2 4
}

func ExampleService_OnEnd() {
	clk := leasetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	s := lease.Must(lease.New(lease.WithClock(clk)))
	defer s.Close()
	ctx := context.Background()

	stop := s.OnEnd(func(l lease.Lease, reason lease.EndReason) {
		fmt.Println("lease", l.ID, "of", l.Holder, reason, "keys", l.Keys)
	})
	defer stop()

	a, _ := s.Grant(ctx, "worker-1", lease.Operation, 5*time.Second)
	_ = s.Put(ctx, "locks/a", nil, a.ID)
	b, _ := s.Grant(ctx, "worker-2", lease.Operation, time.Minute)
	_, _ = s.Revoke(ctx, b.ID)
	clk.Advance(5 * time.Second)
	// Output:
	// lease 2 of worker-2 revoked keys []
	// lease 1 of worker-1 expired keys [locks/a]
}

func ExampleService_Audit() {
	clk := leasetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	s := lease.Must(lease.New(lease.WithClock(clk)))
	defer s.Close()
	ctx := lease.WithTraceID(context.Background(), "req-17")

	l, _ := s.Grant(ctx, "worker-1", lease.Operation, 5*time.Second)
	_, _ = s.Use(ctx, l.ID, lease.Operation)
	_, _ = s.Use(ctx, l.ID, lease.MigrationHandoff)
	clk.Advance(time.Minute)
	_, _ = s.Use(ctx, l.ID, lease.Operation)

	for _, d := range s.Audit() { // oldest first
		fmt.Printf("%s lease %d %-6s allowed=%-5t code=%q trace=%q\n",
			d.Timestamp.Format(time.TimeOnly), d.LeaseID, d.Action, d.Allowed, d.Code, d.TraceID)
	}
	// Output:
	// 09:00:00 lease 1 grant  allowed=true  code="" trace="req-17"
	// 09:00:00 lease 1 use    allowed=true  code="" trace="req-17"
	// 09:00:00 lease 1 use    allowed=false code="LS_PURPOSE_MISMATCH" trace="req-17"
	// 09:00:05 lease 1 expire allowed=true  code="" trace=""
	// 09:01:00 lease 1 use    allowed=false code="LS_STALE_USE" trace="req-17"
}

func ExampleParsePurpose() {
	for _, s := range []string{"state_write", "StateWrite", "MIGRATION_HANDOFF", "reading"} {
		p, err := lease.ParsePurpose(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(s, "->", p)
	}
	// Output:
	// state_write -> state_write
	// StateWrite -> state_write
	// MIGRATION_HANDOFF -> migration_handoff
	// lease: parse purpose: "reading" is not a purpose [LS_INVALID_ARGUMENT]
}
