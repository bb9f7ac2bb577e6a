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
	"github.com/leasehold/lease/lock/election"
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

// A durable work queue in one SQLite file, the first step of
// docs/getting-started.md: enqueue three items, then work them off with a
// handler. Every process that opens the same file shares the queue.
func Example_gettingStartedQueue() {
	dir, err := os.MkdirTemp("", "getting-started")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	store, err := sqlite.NewClaimStore(ctx, filepath.Join(dir, "queue.db"))
	if err != nil {
		log.Fatal(err)
	}
	b, err := claim.New(store) // the Broker owns the store: b.Close closes both
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	for _, to := range []string{"alice", "bob", "carol"} {
		if _, err := b.Enqueue(ctx, "emails", []byte(to), claim.MaxAttempts(5)); err != nil {
			log.Fatal(err)
		}
	}

	work, stop := context.WithCancel(ctx)
	sent := 0
	err = b.Work(work, claim.Worker{
		Queue:         "emails",
		LeaseDuration: 30 * time.Second, // renewed every 10 s while the handler runs
		Handler: func(ctx context.Context, c claim.Claim) error {
			fmt.Printf("sending to %s (attempt %d)\n", c.Payload, c.Attempt)
			if sent++; sent == 3 {
				stop() // enough for the example; a service works until shutdown
			}
			return nil // nil completes the item; an error retries it after a backoff
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	counts, err := b.Counts(ctx, "emails")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("left in the queue:", counts.Visible+counts.Delayed+counts.Claimed)
	// Output:
	// sending to alice (attempt 1)
	// sending to bob (attempt 1)
	// sending to carol (attempt 1)
	// left in the queue: 0
}

// A lock and a leader election on the SQLite lock provider: a
// lock.Manager runs a function while it holds the lock, renewing its lease
// in the background, and turns a second holder away; then alice leads
// until she resigns, and bob leads with a greater fencing token.
func Example_gettingStartedLockAndElection() {
	dir, err := os.MkdirTemp("", "getting-started")
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
	m, err := lock.NewManager(p, lock.WithLeaseDuration(15*time.Second))
	if err != nil {
		log.Fatal(err)
	}

	acquired, err := m.TryLock(ctx, "reports/daily", func(ctx context.Context, l lock.Lease) error {
		fmt.Println("writing the report under fencing token", l.Token)
		// Held: another holder is turned away.
		other, err := m.TryLock(ctx, "reports/daily", func(context.Context, lock.Lease) error { return nil })
		fmt.Println("second holder acquired:", other, err)
		return nil // ctx ends if the lock is lost: stop writing then
	})
	fmt.Println("acquired:", acquired, err)

	el, err := election.New(p, "scheduler")
	if err != nil {
		log.Fatal(err)
	}

	alice, err := el.Campaign(ctx, []byte("alice:8080")) // blocks until alice leads
	if err != nil {
		log.Fatal(err)
	}
	leader, err := el.Leader(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("leader: %s\n", leader.Value)
	// Work as leader runs under alice.Context() and passes alice.Token()
	// to what it writes.
	if err := alice.Resign(ctx); err != nil {
		log.Fatal(err)
	}

	bob, err := el.Campaign(ctx, []byte("bob:8080"))
	if err != nil {
		log.Fatal(err)
	}
	defer bob.Resign(ctx)
	leader, err = el.Leader(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("leader: %s, greater token: %t\n", leader.Value, bob.Token() > alice.Token())
	// Output:
	// writing the report under fencing token 1
	// second holder acquired: false <nil>
	// acquired: true <nil>
	// leader: alice:8080
	// leader: bob:8080, greater token: true
}
