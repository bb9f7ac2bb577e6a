package claim_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

func Example() {
	ctx := context.Background()
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := lease.New(lease.WithClock(clock))
	defer svc.Close()
	b := claim.New(claim.NewMemory(svc))
	defer b.Close()

	_, _ = b.Enqueue(ctx, "emails", []byte("welcome alice"))
	_, _ = b.Enqueue(ctx, "emails", []byte("welcome bob"))

	claims, _ := b.Claim(ctx, "emails", "worker-1", 10, 30*time.Second)
	for _, c := range claims {
		fmt.Printf("claimed %q (attempt %d) until %s\n", c.Payload, c.Attempt, c.ExpiresAt.Format(time.TimeOnly))
	}
	_ = b.Complete(ctx, claims[0])

	// worker-1 stops heartbeating bob's claim: it expires and bob's email
	// is visible again at once.
	clock.Advance(30 * time.Second)
	counts, _ := b.Counts(ctx, "emails")
	fmt.Printf("%+v\n", counts)
	err := b.Complete(ctx, claims[1])
	fmt.Println("late complete is stale:", errors.Is(err, lease.ErrStaleUse))

	again, _ := b.Claim(ctx, "emails", "worker-2", 1, 30*time.Second)
	fmt.Printf("%s claimed %q (attempt %d)\n", again[0].Owner, again[0].Payload, again[0].Attempt)
	// Output:
	// claimed "welcome alice" (attempt 1) until 00:00:30
	// claimed "welcome bob" (attempt 1) until 00:00:30
	// {Visible:1 Delayed:0 Claimed:0 Dead:0 Completed:0 Cancelled:0}
	// late complete is stale: true
	// worker-2 claimed "welcome bob" (attempt 2)
}

func ExampleBroker_Fail() {
	ctx := context.Background()
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := lease.New(lease.WithClock(clock))
	defer svc.Close()
	b := claim.New(claim.NewMemory(svc))
	defer b.Close()

	it, _ := b.Enqueue(ctx, "reports", []byte("q3"), claim.MaxAttempts(3))
	for {
		cs, _ := b.Claim(ctx, "reports", "worker", 1, time.Minute)
		if len(cs) == 0 {
			break
		}
		out, _ := b.Fail(ctx, cs[0], "database down", time.Second, time.Hour)
		fmt.Printf("attempt %d at %s: %s", cs[0].Attempt, clock.Now().Format(time.TimeOnly), out)
		if got, _ := b.Lookup(ctx, it.ID); out == claim.Requeued {
			fmt.Printf(", visible at %s", got.VisibleAt.Format(time.TimeOnly))
		}
		fmt.Println()
		clock.Advance(time.Minute)
	}
	dead, _ := b.List(ctx, claim.Query{Queue: "reports", State: claim.Dead, Limit: 100})
	for _, d := range dead {
		fmt.Printf("dead: %q after %d attempts, last reason %q\n", d.Payload, d.Attempts, d.History[len(d.History)-1].Reason)
	}
	// Output:
	// attempt 1 at 00:00:00: requeued, visible at 00:00:01
	// attempt 2 at 00:01:00: requeued, visible at 00:01:02
	// attempt 3 at 00:02:00: dead_lettered
	// dead: "q3" after 3 attempts, last reason "database down"
}

func ExampleBroker_Work() {
	ctx, cancel := context.WithCancel(context.Background())
	svc := lease.New()
	defer svc.Close()
	b := claim.New(claim.NewMemory(svc))
	defer b.Close()

	for _, name := range []string{"a.png", "b.png", "c.png"} {
		_, _ = b.Enqueue(ctx, "thumbnails", []byte(name))
	}
	done := make(chan string)
	go func() {
		for range 3 {
			fmt.Println("resized", <-done)
		}
		cancel() // stop the workers once all three are done
	}()
	err := b.Work(ctx, claim.Worker{
		Queue:         "thumbnails",
		LeaseDuration: 10 * time.Second,
		Handler: func(ctx context.Context, c claim.Claim) error {
			done <- string(c.Payload)
			return nil
		},
	})
	counts, _ := b.Counts(context.Background(), "thumbnails")
	fmt.Println("work returned", err, "with", counts)
	// Output:
	// resized a.png
	// resized b.png
	// resized c.png
	// work returned <nil> with {0 0 0 0 0 0}
}

func ExampleBackoff() {
	for attempt := 1; attempt <= 6; attempt++ {
		fmt.Print(claim.Backoff(attempt, time.Second, 20*time.Second), " ")
	}
	fmt.Println()
	// Output:
	// 1s 2s 4s 8s 16s 20s
}

func ExampleBroker_Snooze() {
	ctx := context.Background()
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := lease.New(lease.WithClock(clock))
	defer svc.Close()
	b := claim.New(claim.NewMemory(svc))
	defer b.Close()

	_, _ = b.Enqueue(ctx, "mail", []byte("newsletter"), claim.Priority(5))
	urgent, _ := b.Enqueue(ctx, "mail", []byte("password reset"))
	spam, _ := b.Enqueue(ctx, "mail", []byte("spam"))
	_ = b.Cancel(ctx, "mail", spam.ID)

	claims, _ := b.Claim(ctx, "mail", "worker", 1, time.Minute)
	fmt.Printf("first: %s\n", claims[0].Payload) // priority 0 before 5
	// Too early to send: back in ten minutes, no attempt spent.
	_ = b.Snooze(ctx, claims[0], 10*time.Minute)

	items, _ := b.List(ctx, claim.Query{Queue: "mail", Limit: 10})
	for _, it := range items {
		fmt.Printf("%s: %s, priority %d, attempts %d\n", it.Payload, it.State, it.Priority, it.Attempts)
	}
	got, _ := b.Lookup(ctx, urgent.ID)
	fmt.Println("visible again at", got.VisibleAt.Format(time.TimeOnly))
	// Output:
	// first: password reset
	// newsletter: visible, priority 5, attempts 0
	// password reset: delayed, priority 0, attempts 0
	// visible again at 00:10:00
}
