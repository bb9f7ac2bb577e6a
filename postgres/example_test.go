package postgres_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/postgres"
)

// The provider on its own: acquire, contend, release, take over.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("LEASE_POSTGRES_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	p, err := postgres.NewLockProvider(pool, postgres.WithLockTable("example_locks"))
	if err != nil {
		log.Fatal(err)
	}
	if err := p.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	defer pool.Exec(ctx, "DROP TABLE example_locks, example_locks_waiters") // leave the database as it was

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

// Running a function under a lock with lock.Manager, which renews the lease
// in the background and releases it when the function returns.
func Example_manager() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("LEASE_POSTGRES_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	p, err := postgres.NewLockProvider(pool, postgres.WithLockTable("example_manager_locks"))
	if err != nil {
		log.Fatal(err)
	}
	if err := p.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	defer pool.Exec(ctx, "DROP TABLE example_manager_locks, example_manager_locks_waiters") // leave the database as it was

	m, err := lock.NewManager(p, lock.WithLeaseDuration(15*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	acquired, err := m.TryLock(ctx, "reports/daily", func(ctx context.Context, l lock.Lease) error {
		fmt.Println("generating the report; stop when ctx is done")
		return nil
	})
	fmt.Println(acquired, err)
	// Output:
	// generating the report; stop when ctx is done
	// true <nil>
}

// A durable work queue: the claim store on PostgreSQL behind a
// claim.Broker, which enqueues, claims and completes.
func ExampleClaimStore() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("LEASE_POSTGRES_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := postgres.NewClaimStore(pool,
		postgres.WithClaimTable("example_jobs"), // default lease_claims
		postgres.WithPoll(time.Second))          // Notify's bound without a notification
	if err != nil {
		log.Fatal(err)
	}
	// Safe to run from every process at start-up.
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	defer pool.Exec(ctx, "DROP TABLE example_jobs") // leave the database as it was
	// The Broker owns the store: its Close closes both.
	b, err := claim.New(store)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	if _, err := b.Enqueue(ctx, "emails", []byte("welcome alice"), claim.Key("alice")); err != nil {
		log.Fatal(err)
	}
	cs, err := b.Claim(ctx, "emails", "worker-1", 10, 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("claimed %q, attempt %d\n", cs[0].Payload, cs[0].Attempt)
	// Complete returns once the completion is committed.
	if err := b.Complete(ctx, cs[0]); err != nil {
		log.Fatal(err)
	}
	counts, err := b.Counts(ctx, "emails")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%+v\n", counts)
	// Output:
	// claimed "welcome alice", attempt 1
	// {Visible:0 Delayed:0 Claimed:0 Dead:0 Completed:0 Cancelled:0}
}

// Enqueue and completion inside the caller's own transaction: the job
// exists exactly when the business row it belongs to was committed, and a
// handler's writes commit together with its item's completion.
func ExampleClaimStore_CompleteTx() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("LEASE_POSTGRES_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := postgres.NewClaimStore(pool, postgres.WithClaimTable("example_tx_jobs"))
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	defer pool.Exec(ctx, "DROP TABLE example_tx_jobs, example_invoices") // leave the database as it was
	if _, err := pool.Exec(ctx, "CREATE TABLE example_invoices (id int PRIMARY KEY, sent bool NOT NULL)"); err != nil {
		log.Fatal(err)
	}
	b, err := claim.New(store)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	// The invoice and its job commit together, or neither does.
	tx, err := pool.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO example_invoices VALUES (7, false)"); err != nil {
		log.Fatal(err)
	}
	if _, err := store.EnqueueTx(ctx, tx, []claim.NewItem{{Queue: "invoices", Payload: []byte("7"), MaxAttempts: 3}}); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		log.Fatal(err)
	}

	cs, err := b.Claim(ctx, "invoices", "worker-1", 1, 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	// The handler's write and the completion commit together; a stale
	// claim (its lease lost) is refused and the transaction rolled back.
	tx, err = pool.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback(ctx) // a no-op once committed
	if _, err := tx.Exec(ctx, "UPDATE example_invoices SET sent = true WHERE id = 7"); err != nil {
		log.Fatal(err)
	}
	if err := store.CompleteTx(ctx, tx, cs[0].Ref); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		log.Fatal(err)
	}
	var sent bool
	if err := pool.QueryRow(ctx, "SELECT sent FROM example_invoices WHERE id = 7").Scan(&sent); err != nil {
		log.Fatal(err)
	}
	counts, err := b.Counts(ctx, "invoices")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("sent %v, %+v\n", sent, counts)
	// Output:
	// sent true, {Visible:0 Delayed:0 Claimed:0 Dead:0 Completed:0 Cancelled:0}
}

// sendReceipt is the job of an order's receipt.
type sendReceipt struct {
	Order int `json:"order"`
}

func (sendReceipt) Kind() string { return "send_receipt" }

// Enqueue in a database/sql transaction (sqlc, bun, gorm, ...) of pgx's
// stdlib driver: SQLTx makes it what EnqueueTx and CompleteTx take.
func ExampleSQLTx() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("LEASE_POSTGRES_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := postgres.NewClaimStore(pool, postgres.WithClaimTable("example_sql_jobs"))
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	defer pool.Exec(ctx, "DROP TABLE example_sql_jobs, example_orders") // leave the database as it was
	if _, err := pool.Exec(ctx, "CREATE TABLE example_orders (id int PRIMARY KEY)"); err != nil {
		log.Fatal(err)
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()

	tx, err := db.BeginTx(ctx, nil) // db: a *sql.DB of pgx's stdlib driver
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "INSERT INTO example_orders (id) VALUES ($1)", 7); err != nil {
		log.Fatal(err)
	}
	item, err := claim.ArgsItem("receipts", sendReceipt{Order: 7})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := store.EnqueueTx(ctx, postgres.SQLTx(tx), []claim.NewItem{item}); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}

	counts, err := store.Counts(ctx, "receipts")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%+v\n", counts)
	// Output:
	// {Visible:1 Delayed:0 Claimed:0 Dead:0 Completed:0 Cancelled:0}
}

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
