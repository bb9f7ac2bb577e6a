package claim_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

// Welcome is the arguments of a job of kind "welcome".
type Welcome struct {
	User string `json:"user"`
}

// Kind names the job's kind, stored with each item.
func (Welcome) Kind() string { return "welcome" }

// Invoice is the arguments of a job of kind "invoice".
type Invoice struct {
	Number int `json:"number"`
}

// Kind names the job's kind, stored with each item.
func (Invoice) Kind() string { return "invoice" }

func ExampleAddWorker() {
	ctx, stop := context.WithCancel(context.Background())
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := lease.Must(lease.New(lease.WithClock(clock)))
	defer svc.Close()
	b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	defer b.Close()

	handled := 0
	var workers claim.Workers
	_ = claim.AddWorker(&workers, func(_ context.Context, j claim.Job[Welcome]) error {
		fmt.Printf("%s: welcome %s\n", j.Kind, j.Args.User)
		if handled++; handled == 2 {
			stop()
		}
		return nil
	})
	_ = claim.AddWorker(&workers, func(_ context.Context, j claim.Job[Invoice]) error {
		fmt.Printf("%s: invoice #%d\n", j.Kind, j.Args.Number)
		if handled++; handled == 2 {
			stop()
		}
		return nil
	})

	it, _ := b.EnqueueArgs(ctx, "mail", Welcome{User: "alice"})
	fmt.Printf("enqueued %s %s\n", it.Kind, it.Payload)
	_, _ = b.EnqueueArgs(ctx, "mail", Invoice{Number: 42}, claim.Priority(1))
	_, err := b.EnqueueArgs(ctx, "mail", nil)
	var le *lease.Error
	if errors.As(err, &le) {
		fmt.Println("refused field:", le.Field)
	}

	_ = b.Work(ctx, claim.Worker{Queue: "mail", Handler: workers.Handler()})
	// Output:
	// enqueued welcome {"user":"alice"}
	// refused field: args
	// welcome: welcome alice
	// invoice: invoice #42
}

func ExampleDiscard() {
	ctx, stop := context.WithCancel(context.Background())
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := lease.Must(lease.New(lease.WithClock(clock)))
	defer svc.Close()
	b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	defer b.Close()

	_, _ = b.Enqueue(ctx, "orders", []byte("not a number"), claim.MaxAttempts(10))
	_ = b.Work(ctx, claim.Worker{Queue: "orders", Owner: "worker-1", Handler: func(_ context.Context, c claim.Claim) error {
		defer stop()
		if _, err := strconv.Atoi(string(c.Payload)); err != nil {
			// No retry can mend this payload: dead-letter it now.
			return claim.Discard(errors.New("order id is not a number"))
		}
		return nil
	}})

	dead, _ := b.List(context.Background(), claim.Query{Queue: "orders", State: claim.Dead, Limit: 10})
	for _, d := range dead {
		fmt.Printf("dead after %d of %d attempts: %s\n", d.Attempts, d.MaxAttempts, d.History[0].Reason)
	}
	// Output:
	// dead after 1 of 10 attempts: claim: discarded: order id is not a number
}
