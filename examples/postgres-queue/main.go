// Command postgres-queue runs two worker processes that share one work
// queue kept in PostgreSQL, kills one of them in the middle of its work,
// and shows the other finish everything, the killed worker's items
// included once their claims have expired.
//
// The program enqueues the items, then starts itself twice as workers.
// Each worker runs claim.Broker.Work over a postgres.ClaimStore and prints
// a line per item it finishes. The first worker is killed with SIGKILL
// after its first items: it settles nothing more, and the items it held
// are claimed again once their leases expire, by the survivor. Delivery is
// at least once: an item whose handler finished but whose completion the
// crash cut off runs twice, and the summary counts those. The survivor is
// stopped at the end with SIGTERM, which stops it gracefully.
//
// Run it against a throwaway server, from this directory, with
//
//	../../scripts/with-postgres go run .
//
// With -tour it shows the queue's features instead, one after the other:
// typed job kinds routed to their handlers, an enqueue in the same
// transaction as a business row (and one rolled back), a completion in the
// handler's own transaction, a payload failed for good without spending
// its attempts, pause and resume, and a periodic job enqueued by the
// elected process only.
//
// or set LEASE_POSTGRES_DSN (or pass -dsn) to a database where it may
// create the table postgres_queue_example.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// errUnreachable marks a failure to reach the server, for which main prints
// how to start one.
var errUnreachable = errors.New("PostgreSQL is not reachable")

// config is what a run is given.
type config struct {
	dsn   string        // the PostgreSQL server
	items int           // how many items to enqueue
	lease time.Duration // the workers' claim lease
	work  time.Duration // how long a handler works on an item
}

func main() {
	if name := os.Getenv(workerEnv); name != "" {
		os.Exit(workerMain(name))
	}
	var cfg config
	flag.StringVar(&cfg.dsn, "dsn", os.Getenv("LEASE_POSTGRES_DSN"), "PostgreSQL connection string")
	flag.IntVar(&cfg.items, "items", 40, "items to enqueue")
	flag.DurationVar(&cfg.lease, "lease", 2*time.Second, "the lease of each claim")
	flag.DurationVar(&cfg.work, "work", 20*time.Millisecond, "how long a handler works on an item")
	tourMode := flag.Bool("tour", false, "instead, tour the queue's features: typed kinds, a transactional enqueue, pause and resume, a periodic job")
	flag.Parse()
	var err error
	if *tourMode {
		err = tour(context.Background(), cfg.dsn, os.Stdout)
	} else {
		err = run(context.Background(), cfg, os.Stdout)
	}
	if errors.Is(err, errUnreachable) {
		fmt.Fprintf(os.Stderr, `%v

This example needs a PostgreSQL server. Start a throwaway one (it is
removed afterwards) and run the example against it, from this directory:

	../../scripts/with-postgres go run .

or set LEASE_POSTGRES_DSN, or pass -dsn, to a database where the example
may create the table postgres_queue_example.
`, err)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run enqueues the items, runs the two workers, kills one, and narrates to
// out.
func run(ctx context.Context, cfg config, out io.Writer) error {
	if cfg.items < 1 || cfg.lease <= 0 || cfg.work < 0 {
		return fmt.Errorf("need -items >= 1, -lease > 0 and -work >= 0")
	}
	q, err := openQueue(ctx, cfg.dsn)
	if err != nil {
		return err
	}
	defer q.close()
	// A queue of its own per run, so that runs against one database do
	// not see each other's items.
	queue := fmt.Sprintf("thumbnails-%d", time.Now().UnixNano())
	if err := q.enqueue(ctx, queue, cfg.items); err != nil {
		return err
	}
	fmt.Fprintf(out, "enqueued %d items on %s\n", cfg.items, "thumbnails")

	ws, err := startWorkers(ctx, cfg, queue, "alice", "bob")
	if err != nil {
		return err
	}
	defer ws.close()

	done := map[string][]string{} // item -> the workers that finished it
	record := func(d finished) { done[d.item] = append(done[d.item], d.worker) }
	// Kill alice once she has finished a few items: she holds others then.
	for {
		d, err := ws.next(ctx)
		if err != nil {
			return err
		}
		record(d)
		if d.worker == "alice" && len(done) >= 3 {
			break
		}
	}
	if err := ws.kill("alice"); err != nil {
		return err
	}
	fmt.Fprintln(out, "alice is killed in the middle of her work: her claims must expire")

	// Bob finishes the rest, alice's unfinished items among them.
	if err := ws.until(ctx, func() bool { return q.drained(ctx, queue) }, record); err != nil {
		return err
	}
	if err := ws.stop("bob"); err != nil {
		return err
	}
	// Lines bob wrote before he stopped.
	for _, d := range ws.rest() {
		record(d)
	}
	fmt.Fprintln(out, "bob is stopped gracefully")

	twice, byBob := 0, 0
	for _, workers := range done {
		if len(workers) > 1 {
			twice++
		}
		if workers[len(workers)-1] == "bob" {
			byBob++
		}
	}
	fmt.Fprintf(out, "every item finished: %t\n", len(done) == cfg.items)
	fmt.Fprintf(out, "bob finished items alice had started or never reached: %t\n", byBob > 0)
	// Printed to stderr: it differs from run to run.
	fmt.Fprintf(os.Stderr, "(%d items, %d finished by bob last, %d ran twice: at least once delivery)\n", len(done), byBob, twice)
	return nil
}

// waitLimit bounds every wait for a worker.
const waitLimit = 30 * time.Second
