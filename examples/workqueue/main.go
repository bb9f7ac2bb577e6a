// Command workqueue shows the claim package: a work queue whose claims are
// leases. Part one runs on a fake clock, so it is instant and shows every
// rule: claims, heartbeats, a crashed worker whose claim expires, failures
// with backoff, a dead letter and its requeue. Part two runs the worker
// helper on the real clock for a moment. Part three shows a handler told to
// stop when its claim is taken away.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

func main() {
	ctx := context.Background()
	fakeClock(ctx, os.Stdout)
	fmt.Println()
	realClock(ctx, os.Stdout)
	fmt.Println()
	lostClaim(ctx, os.Stdout)
}

func fakeClock(ctx context.Context, w io.Writer) {
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	svc := must(lease.New(lease.WithClock(clock)))
	defer svc.Close()
	b := must(claim.New(must(claim.NewMemory(svc)), claim.WithMaxAttempts(3)))
	defer b.Close()
	const queue, ttl = "invoices", 30 * time.Second
	show := func(what string) {
		fmt.Fprintf(w, "%s  %-34s %+v\n", clock.Now().Format(time.TimeOnly), what, must(b.Counts(ctx, queue)))
	}

	for _, id := range []string{"inv-1", "inv-2", "inv-3"} {
		must(b.Enqueue(ctx, queue, []byte(id), claim.Key(id)))
	}
	must(b.Enqueue(ctx, queue, []byte("inv-1"), claim.Key("inv-1"))) // a duplicate: ignored
	must(b.Enqueue(ctx, queue, []byte("inv-4"), claim.Delay(time.Minute)))
	show("enqueued 3 (+1 duplicate), 1 delayed")

	cs := must(b.Claim(ctx, queue, "alice", 2, ttl))
	show("alice claims 2")
	crashed := must(b.Claim(ctx, queue, "bob", 1, ttl))[0]
	show("bob claims 1, then crashes")

	clock.Advance(20 * time.Second)
	cs[0] = must(b.Heartbeat(ctx, cs[0], ttl))
	cs[1] = must(b.Heartbeat(ctx, cs[1], ttl))
	show("alice heartbeats both")

	clock.Advance(10 * time.Second)
	show("bob's lease expired: inv-3 is back")
	_, err := b.Heartbeat(ctx, crashed, ttl)
	fmt.Fprintf(w, "          bob comes back: %v (stale: %t)\n", err, errors.Is(err, lease.ErrStaleUse))

	if err := b.Complete(ctx, cs[0]); err != nil {
		panic(err)
	}
	out := must(b.Fail(ctx, cs[1], "payment gateway timeout", 5*time.Second, time.Minute))
	show(fmt.Sprintf("alice: %s done, %s %s", cs[0].Payload, cs[1].Payload, out))

	// inv-2 fails on every attempt until it is dead-lettered.
	for {
		clock.Advance(time.Minute)
		c := must(b.Claim(ctx, queue, "carol", 10, ttl))
		if len(c) == 0 {
			break
		}
		for _, c := range c {
			if string(c.Payload) != "inv-2" {
				must(0, b.Complete(ctx, c))
				continue
			}
			out := must(b.Fail(ctx, c, "payment gateway timeout", 5*time.Second, time.Minute))
			fmt.Fprintf(w, "%s  carol: inv-2 attempt %d %s\n", clock.Now().Format(time.TimeOnly), c.Attempt, out)
		}
	}
	show("carol drained the queue")
	for _, d := range must(b.List(ctx, claim.Query{Queue: queue, State: claim.Dead, Limit: 100})) {
		var reasons []string
		for _, f := range d.History {
			reason := f.Reason
			if f.Lost {
				reason += " (lost)"
			}
			reasons = append(reasons, fmt.Sprintf("#%d %s: %s", f.Attempt, f.Owner, reason))
		}
		fmt.Fprintf(w, "          dead letter %s: %s\n", d.Payload, strings.Join(reasons, "; "))
		must(b.RequeueDead(ctx, queue, d.ID))
	}
	show("dead letters requeued")
}

// realClock runs three workers on the real clock until eight jobs are done.
func realClock(ctx context.Context, w io.Writer) {
	svc := must(lease.New())
	defer svc.Close()
	b := must(claim.New(must(claim.NewMemory(svc))))
	defer b.Close()
	for i := range 8 {
		must(b.Enqueue(ctx, "thumbnails", fmt.Appendf(nil, "img-%d", i)))
	}
	wctx, cancel := context.WithCancel(ctx)
	var (
		mu   sync.Mutex
		done []string
	)
	err := b.Work(wctx, claim.Worker{
		Queue:         "thumbnails",
		Concurrency:   3,
		LeaseDuration: 300 * time.Millisecond,
		BaseDelay:     10 * time.Millisecond,
		Handler: func(ctx context.Context, c claim.Claim) error {
			if string(c.Payload) == "img-5" && c.Attempt == 1 {
				return errors.New("corrupt header") // retried after 10ms
			}
			select {
			case <-time.After(20 * time.Millisecond): // "work", heartbeated
			case <-ctx.Done():
				return ctx.Err()
			}
			mu.Lock()
			defer mu.Unlock()
			done = append(done, fmt.Sprintf("%s#%d", c.Payload, c.Attempt))
			if len(done) == 8 {
				cancel()
			}
			return nil
		},
	})
	slices.Sort(done)
	fmt.Fprintf(w, "real clock: workers returned %v after %s\n", err, strings.Join(done, " "))
	fmt.Fprintf(w, "real clock: %+v\n", must(b.Counts(ctx, "thumbnails")))
}

// lostClaim runs a worker whose handler hangs. An operator revokes the
// claim's lease through the service: the Broker cancels the handler's
// context, with the reason, before the item can be claimed again, and
// another owner takes the item over.
func lostClaim(ctx context.Context, w io.Writer) {
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	svc := must(lease.New(lease.WithClock(clock)))
	defer svc.Close()
	b := must(claim.New(must(claim.NewMemory(svc))))
	defer b.Close()

	running := make(chan claim.Claim)
	stopped := make(chan error)
	rescued := make(chan struct{})
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		done <- b.Work(wctx, claim.Worker{Queue: "reports", Owner: "hung", Handler: func(ctx context.Context, c claim.Claim) error {
			running <- c
			<-ctx.Done() // a handler that only stops when told to
			stopped <- context.Cause(ctx)
			<-rescued
			return nil // too late: the item is not this worker's any more
		}})
	}()
	must(b.Enqueue(ctx, "reports", []byte("q4")))
	c := <-running
	fmt.Fprintf(w, "%s runs %s under lease %d\n", c.Owner, c.Payload, lease.ID(c.Ref.Token))

	must(svc.Revoke(ctx, lease.ID(c.Ref.Token))) // an operator takes the claim away
	cause := <-stopped
	fmt.Fprintf(w, "handler told to stop: %v\n", cause)
	fmt.Fprintf(w, "claim lost: %t, stale: %t\n", errors.Is(cause, claim.ErrClaimLost), errors.Is(cause, lease.ErrStaleUse))

	again := must(b.Claim(ctx, "reports", "rescuer", 1, time.Minute))[0]
	fmt.Fprintf(w, "%s claims %s, attempt %d\n", again.Owner, again.Payload, again.Attempt)
	close(rescued)
	must(0, b.Complete(ctx, again))
	cancel()
	must(0, <-done)
	fmt.Fprintf(w, "%+v\n", must(b.Counts(ctx, "reports")))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
