package election_test

import (
	"context"
	"fmt"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

// Two candidates: the first leads, the second waits in Campaign until the
// first resigns, then leads with a greater fencing token.
func Example() {
	svc := lease.New()
	defer svc.Close()
	el, err := election.New(lock.NewMemory(svc), "scheduler")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	alice, err := el.Campaign(ctx, []byte("alice:8080"))
	if err != nil {
		fmt.Println(err)
		return
	}
	leader, _ := el.Leader(ctx)
	fmt.Printf("leader: %s\n", leader.Value)

	won := make(chan *election.Leadership)
	go func() {
		bob, err := el.Campaign(ctx, []byte("bob:8080"))
		if err != nil {
			fmt.Println(err)
		}
		won <- bob
	}()
	// Work as leader runs under alice.Context(), and passes
	// alice.Token() to what it writes.
	if err := alice.Resign(ctx); err != nil {
		fmt.Println(err)
	}
	bob := <-won
	defer bob.Resign(ctx)
	leader, _ = el.Leader(ctx)
	fmt.Printf("leader: %s, token greater: %t\n", leader.Value, bob.Token() > alice.Token())
	fmt.Println("alice's context ended:", context.Cause(alice.Context()))
	// Output:
	// leader: alice:8080
	// leader: bob:8080, token greater: true
	// alice's context ended: election: resigned [LS_RESIGNED]
}

// Run campaigns in a loop and calls back as the leadership changes, in the
// manner of client-go's leaderelection. Cancelling a leader's Run releases
// the lock at once, and the next candidate takes over.
func ExampleElection_Run() {
	svc := lease.New()
	defer svc.Close()
	el, err := election.New(lock.NewMemory(svc), "scheduler")
	if err != nil {
		fmt.Println(err)
		return
	}

	leading, stopped := make(chan string), make(chan string)
	candidate := func(ctx context.Context, name string) <-chan error {
		done := make(chan error, 1)
		go func() {
			done <- el.Run(ctx, []byte(name), election.Callbacks{
				OnStartedLeading: func(ctx context.Context, ld *election.Leadership) {
					leading <- name
					// Lead until ctx ends, passing ld.Token() to what the
					// leader writes, so that a stale leader is fenced off.
					<-ctx.Done()
				},
				OnStoppedLeading: func() { stopped <- name },
			})
		}()
		return done
	}
	ctxA, stopA := context.WithCancel(context.Background())
	doneA := candidate(ctxA, "alice")
	fmt.Println(<-leading, "leads")
	ctxB, stopB := context.WithCancel(context.Background())
	doneB := candidate(ctxB, "bob")

	stopA() // alice's process shuts down: the lock is released at once
	fmt.Println(<-stopped, "stopped leading")
	fmt.Println(<-leading, "leads")
	fmt.Println("alice's Run:", <-doneA)
	stopB()
	fmt.Println(<-stopped, "stopped leading")
	fmt.Println("bob's Run:", <-doneB)
	// Output:
	// alice leads
	// alice stopped leading
	// bob leads
	// alice's Run: context canceled
	// bob stopped leading
	// bob's Run: context canceled
}
