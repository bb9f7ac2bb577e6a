package claim_test

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

// Sweep is the arguments of the periodic job of kind "sweep".
type Sweep struct {
	Tick time.Time `json:"tick"`
}

// Kind names the job's kind, stored with each item.
func (Sweep) Kind() string { return "sweep" }

func ExamplePeriodic() {
	svc := lease.Must(lease.New())
	defer svc.Close()
	b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	defer b.Close()

	// Every process runs the same Periodic; the leader of the election
	// enqueues each tick, once.
	e, _ := election.New(lease.Must(lock.NewMemory(svc)), "periodic", election.WithLeaseDuration(time.Second))
	p, _ := claim.NewPeriodic(b, e, claim.PeriodicJob{
		Name:     "sweep",
		Schedule: claim.Every(20 * time.Millisecond),
		Queue:    "maintenance",
		Args:     func(tick time.Time) claim.Args { return Sweep{Tick: tick} },
	})
	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- p.Run(runCtx) }()

	workCtx, stopWork := context.WithCancel(context.Background())
	var ticks []time.Time
	var workers claim.Workers
	_ = claim.AddWorker(&workers, func(_ context.Context, j claim.Job[Sweep]) error {
		if ticks = append(ticks, j.Args.Tick); len(ticks) == 3 {
			stopWork()
		}
		return nil
	})
	_ = b.Work(workCtx, claim.Worker{Queue: "maintenance", Handler: workers.Handler()})
	stopRun()
	fmt.Println("run:", <-ran)

	for i := 1; i < len(ticks); i++ {
		fmt.Println("tick", i+1, "came", ticks[i].Sub(ticks[i-1]), "after the one before")
	}
	// Output:
	// run: <nil>
	// tick 2 came 20ms after the one before
	// tick 3 came 20ms after the one before
}
