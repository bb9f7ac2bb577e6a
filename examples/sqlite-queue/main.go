// Command sqlite-queue runs a durable work queue kept in an SQLite file:
// nothing to install, nothing to start. Every process that opens the same
// file shares the queue, so run a producer and any number of workers side
// by side, kill some, start them again: the items survive, and a killed
// worker's items are claimed again once their leases end.
//
//	go run . -db /tmp/queue.db -enqueue 100     # add 100 items, then exit
//	go run . -db /tmp/queue.db -worker alice    # work until the queue is empty
//	go run . -db /tmp/queue.db -worker bob      # (in another terminal)
//
// With neither flag it enqueues 20 items on a file of its own and works
// them off with two workers, in one process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

const queue = "thumbnails"

func main() {
	db := flag.String("db", "", "the SQLite file of the queue (created if missing)")
	enqueue := flag.Int("enqueue", 0, "enqueue this many items, then exit")
	worker := flag.String("worker", "", "work as this worker until the queue is empty")
	work := flag.Duration("work", 20*time.Millisecond, "how long a handler works on an item")
	flag.Parse()
	if err := run(context.Background(), *db, *enqueue, *worker, *work, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run does what the flags say, narrating to out.
func run(ctx context.Context, db string, enqueue int, worker string, work time.Duration, out io.Writer) error {
	demo := db == ""
	if demo {
		dir, err := os.MkdirTemp("", "sqlite-queue")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		db, enqueue = filepath.Join(dir, "queue.db"), 20
	}
	store, err := sqlite.NewClaimStore(ctx, db)
	if err != nil {
		return err
	}
	b := claim.New(store)
	defer b.Close()
	if enqueue > 0 {
		items := make([]claim.NewItem, enqueue)
		for i := range items {
			items[i] = claim.NewItem{Queue: queue, Payload: fmt.Appendf(nil, "image-%d.png", i+1), MaxAttempts: 5}
		}
		if _, err := b.EnqueueMany(ctx, items); err != nil {
			return err
		}
		fmt.Fprintf(out, "enqueued %d items on %s\n", enqueue, queue)
		if worker == "" && !demo {
			return nil // a producer: the workers are other processes
		}
	}
	names := []string{worker}
	if worker == "" {
		names = []string{"alice", "bob"}
	}
	var (
		mu   sync.Mutex
		done = map[string]int{}
		wg   sync.WaitGroup
		errs = make(chan error, len(names))
	)
	for _, name := range names {
		wg.Go(func() {
			errs <- workUntilEmpty(ctx, b, name, work, func() {
				mu.Lock()
				done[name]++
				mu.Unlock()
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	total := 0
	for _, n := range done {
		total += n
	}
	fmt.Fprintf(out, "%d items finished by %d workers; the queue is empty\n", total, len(names))
	return nil
}

// workUntilEmpty runs a worker on the queue until nothing is left in it:
// nothing waiting and nothing claimed by anyone.
func workUntilEmpty(ctx context.Context, b *claim.Broker, name string, work time.Duration, finished func()) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	watch := make(chan error, 1)
	go func() {
		defer close(watch)
		for ctx.Err() == nil {
			c, err := b.Counts(ctx, queue)
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					watch <- err
				}
				stop()
				return
			}
			if c.Visible+c.Delayed+c.Claimed == 0 {
				stop()
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	err := b.Work(ctx, claim.Worker{
		Queue: queue, Owner: name, Concurrency: 4, LeaseDuration: 5 * time.Second,
		Handler: func(ctx context.Context, c claim.Claim) error {
			select {
			case <-time.After(work): // make a thumbnail
			case <-ctx.Done():
				return ctx.Err()
			}
			finished()
			return nil
		},
	})
	if werr := <-watch; werr != nil {
		return werr
	}
	return err
}
