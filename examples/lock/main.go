// Command lock shows named exclusive locks with fencing tokens, on a fake
// clock so it runs instantly: two workers contend and one wins; a holder
// that stops renewing loses its lock and its context is cancelled; and a
// resource guarded by a Fence refuses the stale holder's late write.
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

// store is a resource that takes writes only with a current fencing token.
type store struct {
	fence lock.Fence
	value string
}

func (s *store) write(l lock.Lease, v string) error {
	if err := s.fence.Check(l.Name, l.Token); err != nil {
		return err
	}
	s.value = v
	return nil
}

func main() {
	ctx := context.Background()
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc, err := lease.New(lease.WithClock(clock))
	check(err)
	defer svc.Close()
	mem, err := lock.NewMemory(svc)
	check(err)
	newWorker := func(id string) *lock.Manager {
		// A Manager over a Memory times its renewals on the service's clock.
		m, err := lock.NewManager(mem, lock.WithExecutionID(id), lock.WithLeaseDuration(30*time.Second))
		check(err)
		return m
	}
	alice, bob := newWorker("alice"), newWorker("bob")
	var res store

	// 1. Contention: while alice holds "report", bob cannot get it.
	_, err = alice.TryLock(ctx, "report", func(ctx context.Context, l lock.Lease) error {
		fmt.Printf("alice holds %q with token %d\n", l.Name, l.Token)
		got, err := bob.TryLock(ctx, "report", func(context.Context, lock.Lease) error { return nil })
		fmt.Printf("bob acquired: %t, err: %v\n", got, err)
		clock.Advance(time.Minute) // alice's Manager renews every 10 s
		fmt.Printf("a minute later alice still holds it: %v\n", ctx.Err() == nil)
		return res.write(l, "alice's report")
	})
	check(err)

	// 2. A lost lease: bob's renewals stop reaching the provider (a
	// partition, say). Past the safety margin his context is cancelled.
	cut := &partition{Memory: mem}
	bobCut, err := lock.NewManager(cut, lock.WithExecutionID("bob"), lock.WithLeaseDuration(30*time.Second))
	check(err)
	var stale lock.Lease
	_, err = bobCut.TryLock(ctx, "report", func(ctx context.Context, l lock.Lease) error {
		stale = l
		fmt.Printf("bob holds %q with token %d\n", l.Name, l.Token)
		cut.down = true
		clock.Advance(27 * time.Second)
		fmt.Printf("after 27 s without a renewal: %v (cause: %v)\n", ctx.Err(), context.Cause(ctx))
		return nil
	})
	fmt.Printf("bob's TryLock: %v\n", err)

	// 3. Fencing: bob's release did not get through either, so the lock is
	// free only once his lease expires, at 30 s. Then alice takes it over
	// and writes; bob's late write with his old token is refused.
	got, err := alice.TryLock(ctx, "report", func(context.Context, lock.Lease) error { return nil })
	check(err)
	fmt.Printf("at 27 s alice acquired: %t\n", got)
	clock.Advance(3 * time.Second)
	_, err = alice.TryLock(ctx, "report", func(ctx context.Context, l lock.Lease) error {
		fmt.Printf("alice holds %q again with token %d\n", l.Name, l.Token)
		return res.write(l, "alice's second report")
	})
	check(err)
	err = res.write(stale, "bob's late report")
	fmt.Printf("bob's late write: %v (stale: %t)\n", err, errors.Is(err, lock.ErrStaleToken))
	fmt.Printf("the store holds %q\n", res.value)
}

// partition is a provider that bob cannot reach once it is down: his
// renewals and his release fail. Embedding the Memory keeps its time base
// (its Clock method), so the Manager still counts on the service's time.
type partition struct {
	*lock.Memory
	down bool
}

func (p *partition) Renew(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
	if p.down {
		return nil, errors.New("network unreachable")
	}
	return p.Memory.Renew(ctx, leases, d)
}

func (p *partition) Release(ctx context.Context, leases []lock.Lease) error {
	if p.down {
		return errors.New("network unreachable")
	}
	return p.Memory.Release(ctx, leases)
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
