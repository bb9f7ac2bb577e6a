package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/lock/election"
	"github.com/leasehold/lease/postgres"
)

// The tour's tables: the queue's items, a business table written in the
// same transactions as the queue, and the lock table of the election that
// picks the process enqueueing the periodic job.
const (
	tourTable    = "postgres_queue_tour"
	invoiceTable = "postgres_queue_tour_invoices"
	lockTable    = "postgres_queue_tour_locks"
	tourQueue    = "invoices"
)

// SendInvoice is a typed job: its Kind routes it to its handler, and its
// fields travel as JSON in the item's payload.
type SendInvoice struct {
	Invoice int `json:"invoice"`
}

// Kind names the job's kind.
func (SendInvoice) Kind() string { return "send_invoice" }

// Reconcile is the periodic job, enqueued at every tick by the elected
// process only.
type Reconcile struct {
	Tick time.Time `json:"tick"`
}

// Kind names the job's kind.
func (Reconcile) Kind() string { return "reconcile" }

// tour shows, on one queue: typed kinds routed to their handlers, an
// enqueue in the same transaction as a business row (and one rolled back),
// a completion in the handler's own transaction, a payload no retry can
// mend failed for good, pause and resume, and a periodic job.
func tour(ctx context.Context, dsn string, out io.Writer) error {
	if dsn == "" {
		return fmt.Errorf("%w: LEASE_POSTGRES_DSN is not set", errUnreachable)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return fmt.Errorf("%w: %v", errUnreachable, err)
	}
	defer pool.Close()
	if err := pool.Ping(ctx); err != nil {
		return fmt.Errorf("%w at %s: %v", errUnreachable, dsn, err)
	}
	// Completed items are kept for a day, so Counts shows what ran.
	store, err := postgres.NewClaimStore(pool, postgres.WithClaimTable(tourTable),
		postgres.WithRetention(claim.StandardRetention))
	if err != nil {
		return err
	}
	if err := store.Migrate(ctx); err != nil {
		return err
	}
	provider, err := postgres.NewLockProvider(pool, postgres.WithLockTable(lockTable))
	if err != nil {
		return err
	}
	if err := provider.Migrate(ctx); err != nil {
		return err
	}
	defer dropTourTables(pool)
	if _, err := pool.Exec(ctx, "CREATE TABLE "+invoiceTable+" (id int PRIMARY KEY, sent bool NOT NULL DEFAULT false)"); err != nil {
		return err
	}
	b, err := claim.New(store)
	if err != nil {
		return err
	}
	defer b.Close()

	// 1. Transactional enqueue: the invoice and its job commit together.
	for _, inv := range []struct {
		id     int
		commit bool
	}{{1, true}, {2, false}, {3, true}} {
		if err := createInvoice(ctx, pool, store, inv.id, inv.commit); err != nil {
			return err
		}
	}
	counts, err := b.Counts(ctx, tourQueue)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "invoices 1 and 3 committed, 2 rolled back: %d jobs visible\n", counts.Visible)

	// 2. Pause: enqueue still works, but nothing is handed out.
	if err := b.PauseQueue(ctx, tourQueue); err != nil {
		return err
	}
	bad := claim.NewItem{Queue: tourQueue, Kind: SendInvoice{}.Kind(), Payload: []byte("{not json")}
	if _, err := b.EnqueueMany(ctx, []claim.NewItem{bad}); err != nil {
		return err
	}
	cs, err := b.Claim(ctx, tourQueue, "inspector", 10, time.Minute)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "paused: a claim of 10 got %d\n", len(cs))

	// 3. Typed handlers: each kind routed to its own.
	// The handlers report to the tour without ever blocking.
	handled := make(chan string, 64)
	report := func(msg string) {
		select {
		case handled <- msg:
		default:
		}
	}
	var ws claim.Workers
	if err := claim.AddWorker(&ws, func(ctx context.Context, j claim.Job[SendInvoice]) error {
		// The handler's write and its item's completion commit together.
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx) // a no-op once committed
		if _, err := tx.Exec(ctx, "UPDATE "+invoiceTable+" SET sent = true WHERE id = $1", j.Args.Invoice); err != nil {
			return err
		}
		if err := store.CompleteTx(ctx, tx, j.Ref); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		report(fmt.Sprintf("sent invoice %d", j.Args.Invoice))
		return nil
	}); err != nil {
		return err
	}
	if err := claim.AddWorker(&ws, func(ctx context.Context, j claim.Job[Reconcile]) error {
		report("reconciled")
		return nil
	}); err != nil {
		return err
	}

	work, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The Broker's own completion of an item the handler completed in
		// its transaction is refused as stale, which Work ignores.
		_ = b.Work(work, claim.Worker{Queue: tourQueue, Handler: ws.Handler(), Concurrency: 2, LeaseDuration: 10 * time.Second})
	}()
	defer wg.Wait()
	defer stop()

	// 4. Resume: the worker is woken at once and drains the queue.
	if err := b.ResumeQueue(ctx, tourQueue); err != nil {
		return err
	}
	got := map[string]bool{}
	for len(got) < 2 {
		got[<-handled] = true
	}
	fmt.Fprintln(out, "resumed: sent invoice 1, sent invoice 3")

	// The payload that does not decode went to the dead letters at once,
	// without spending its other attempts.
	dead, err := waitForDead(ctx, b)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "dead letter after %d of its %d attempts, discarded: %v\n",
		dead.Attempts, dead.MaxAttempts, strings.Contains(dead.History[len(dead.History)-1].Reason, "discarded"))

	// 5. A periodic job, enqueued by the elected process only, each tick
	// once however many processes run the same schedule.
	el, err := election.New(provider, "postgres-queue-tour-periodic")
	if err != nil {
		return err
	}
	periodic, err := claim.NewPeriodic(b, el, claim.PeriodicJob{
		Name: "reconcile", Queue: tourQueue, Schedule: claim.Every(200 * time.Millisecond),
		Args: func(tick time.Time) claim.Args { return Reconcile{Tick: tick} },
	})
	if err != nil {
		return err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = periodic.Run(work)
	}()
	for msg := range handled {
		if msg == "reconciled" {
			break
		}
	}
	fmt.Fprintln(out, "periodic: reconciled")

	var sent int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+invoiceTable+" WHERE sent").Scan(&sent); err != nil {
		return err
	}
	fmt.Fprintf(out, "invoices sent: %d\n", sent)
	return nil
}

// createInvoice inserts invoice id and enqueues its job in one
// transaction, which it commits or rolls back.
func createInvoice(ctx context.Context, pool *pgxpool.Pool, store *postgres.ClaimStore, id int, commit bool) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // a no-op once committed
	if _, err := tx.Exec(ctx, "INSERT INTO "+invoiceTable+" (id) VALUES ($1)", id); err != nil {
		return err
	}
	it, err := claim.ArgsItem(tourQueue, SendInvoice{Invoice: id})
	if err != nil {
		return err
	}
	it.MaxAttempts = 5
	if _, err := store.EnqueueTx(ctx, tx, []claim.NewItem{it}); err != nil {
		return err
	}
	if !commit {
		return tx.Rollback(ctx)
	}
	return tx.Commit(ctx)
}

// waitForDead returns the queue's first dead letter once there is one.
func waitForDead(ctx context.Context, b *claim.Broker) (claim.Item, error) {
	for {
		items, err := b.List(ctx, claim.Query{Queue: tourQueue, State: claim.Dead, Limit: 1})
		if err != nil {
			return claim.Item{}, err
		}
		if len(items) > 0 {
			return items[0], nil
		}
		select {
		case <-ctx.Done():
			return claim.Item{}, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// dropTourTables leaves the database as it was.
func dropTourTables(pool *pgxpool.Pool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+tourTable+", "+invoiceTable+", "+lockTable+", "+lockTable+"_waiters")
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Println("dropping the tour's tables:", err)
	}
}
