package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
	"github.com/leasehold/lease/sqlite"
)

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
