package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/sqlite"
)

// The lock provider: acquire, contend, release, take over. Any process
// that opens the same file shares the locks.
func Example() {
	dir, err := os.MkdirTemp("", "lease-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	p, err := sqlite.NewLockProvider(ctx, filepath.Join(dir, "locks.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	a, err := p.Acquire(ctx, "reports/daily", "worker-1", 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("worker-1 acquired:", a != nil)
	b, err := p.Acquire(ctx, "reports/daily", "worker-2", 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("worker-2 acquired:", b != nil) // contention is nil, nil
	if err := p.Release(ctx, []lock.Lease{*a}); err != nil {
		log.Fatal(err)
	}
	b, err = p.Acquire(ctx, "reports/daily", "worker-2", 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("worker-2 acquired after the release:", b != nil)
	fmt.Println("with a greater fencing token:", b.Token > a.Token)
	// Output:
	// worker-1 acquired: true
	// worker-2 acquired: false
	// worker-2 acquired after the release: true
	// with a greater fencing token: true
}

// A durable work queue in a file: a Broker over the claim store runs a
// handler on each item. Other processes opening the file could enqueue and
// work too.
func ExampleNewClaimStore() {
	dir, err := os.MkdirTemp("", "lease-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	store, err := sqlite.NewClaimStore(ctx, filepath.Join(dir, "queue.db"))
	if err != nil {
		log.Fatal(err)
	}
	b := lease.Must(claim.New(store))
	defer b.Close() // closes the store too

	for _, name := range []string{"alpha", "beta", "gamma"} {
		if _, err := b.Enqueue(ctx, "emails", []byte(name)); err != nil {
			log.Fatal(err)
		}
	}
	var handled atomic.Int32
	workCtx, stop := context.WithCancel(ctx)
	err = b.Work(workCtx, claim.Worker{
		Queue: "emails",
		Handler: func(ctx context.Context, c claim.Claim) error {
			if handled.Add(1) == 3 {
				stop() // enough for the example: stop working
			}
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	counts, err := b.Counts(ctx, "emails")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("handled:", handled.Load(), "left:", counts.Visible+counts.Delayed+counts.Claimed)
	// Output:
	// handled: 3 left: 0
}

// Durability is a choice: SyncNormal saves an fsync per commit, at the
// price of the last commits before a power loss (never the file's
// consistency).
func ExampleWithSynchronous() {
	dir, err := os.MkdirTemp("", "lease-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlite.NewClaimStore(context.Background(), filepath.Join(dir, "queue.db"),
		sqlite.WithSynchronous(sqlite.SyncNormal))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	fmt.Println(sqlite.SyncNormal)
	// Output: NORMAL
}
