package postgres_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/postgres"
)

// The queue of docs/getting-started.md on PostgreSQL: only the store
// changes. It has no Output line, so go test compiles it without running
// it: it needs a server, named by LEASE_POSTGRES_DSN.
func Example_gettingStartedQueue() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("LEASE_POSTGRES_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := postgres.NewClaimStore(pool) // table lease_claims
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil { // safe to run from every process at start-up
		log.Fatal(err)
	}
	b, err := claim.New(store)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	// From here on, the code is the SQLite example's.
	for _, to := range []string{"alice", "bob", "carol"} {
		if _, err := b.Enqueue(ctx, "emails", []byte(to), claim.MaxAttempts(5)); err != nil {
			log.Fatal(err)
		}
	}
	err = b.Work(ctx, claim.Worker{
		Queue:         "emails",
		LeaseDuration: 30 * time.Second,
		Handler: func(ctx context.Context, c claim.Claim) error {
			fmt.Printf("sending to %s (attempt %d)\n", c.Payload, c.Attempt)
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
}
