package pgcompare

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/postgres"
)

// OurSettings are the ways the claim store is measured, beside
// RiverSettings: 100 workers, like River's defaults and tuned settings,
// and 2,000 like River's own benchmark, on a pool of DefaultPoolSize
// connections.
func OurSettings() []Setting { return claimStoreSettings(openClaimStore) }

// FeatureSettings are the claim store with job kinds and retention on
// beside River's tuned and benchmark settings and the plain store at 100
// workers: the comparison of a queue that keeps what it completed, as
// River does. River's defaults are left out: its 100 ms fetch cooldown
// caps them at about 1,000 jobs/s, which would make a run last minutes.
func FeatureSettings() []Setting {
	rs := RiverSettings()
	return append([]Setting{rs[1], rs[2], OurSettings()[0]}, KindsRetentionSettings()...)
}

// KindsRetentionSettings are OurSettings with job kinds and retention on
// (and, in a third setting, 100 workers that hold up to 100 items more
// claimed, claim.Worker.Prefetch):
// items are enqueued as typed args (claim.ArgsItem) and routed by a
// claim.Workers, and completed items are kept for
// claim.StandardRetention (24 hours, as River keeps its completed jobs by
// default) instead of being deleted.
func KindsRetentionSettings() []Setting {
	open := func(workers, prefetch int) func(context.Context, *pgxpool.Pool) (System, error) {
		return func(ctx context.Context, pool *pgxpool.Pool) (System, error) {
			s, err := openClaimStoreWith(ctx, pool, workers, true, true)
			if err == nil {
				s.prefetch = prefetch
			}
			return s, err
		}
	}
	return []Setting{
		{Name: "lease kinds+retention (100 workers)", PoolSize: DefaultPoolSize, Open: open(100, 0)},
		{Name: "lease kinds+retention (2,000 workers)", PoolSize: DefaultPoolSize, Open: open(2000, 0)},
		{Name: "lease kinds+retention (100 workers, prefetch 100)", PoolSize: DefaultPoolSize, Open: open(100, 100)},
	}
}

// HistorySettings are what the history measurement (Config.History)
// compares: River tuned at 100 workers, which keeps its completed jobs 24
// hours by default, beside the claim store at 100 workers keeping them as
// long (claim.StandardRetention), with and without job kinds.
func HistorySettings() []Setting {
	rs := RiverSettings()
	return []Setting{rs[1], SplitSettings()[1], KindsRetentionSettings()[0]}
}

// SplitSettings are the claim store at 100 workers with job kinds alone
// and with retention alone: beside the plain store and KindsRetentionSettings
// they say which of the two features a difference comes from.
func SplitSettings() []Setting {
	open := func(kinds, retention bool) func(context.Context, *pgxpool.Pool) (System, error) {
		return func(ctx context.Context, pool *pgxpool.Pool) (System, error) {
			return openClaimStoreWith(ctx, pool, 100, kinds, retention)
		}
	}
	return []Setting{
		{Name: "lease kinds only (100 workers)", PoolSize: DefaultPoolSize, Open: open(true, false)},
		{Name: "lease retention only (100 workers)", PoolSize: DefaultPoolSize, Open: open(false, true)},
	}
}

// claimStoreSettings are OurSettings with systems that openStore opens, so
// that a test can stand in for the store.
func claimStoreSettings(openStore func(ctx context.Context, pool *pgxpool.Pool, workers int) (System, error)) []Setting {
	open := func(workers int) func(context.Context, *pgxpool.Pool) (System, error) {
		return func(ctx context.Context, pool *pgxpool.Pool) (System, error) { return openStore(ctx, pool, workers) }
	}
	return []Setting{
		{Name: "lease ClaimStore (100 workers)", PoolSize: DefaultPoolSize, Open: open(100)},
		{Name: "lease ClaimStore (2,000 workers)", PoolSize: DefaultPoolSize, Open: open(2000)},
	}
}

const (
	ourQueue = "pgcompare"
	// ourBatch bounds how many items one claim of Work takes (it never
	// takes more than it has idle handlers for): 100 workers claim up to
	// 100 at a time, 2,000 up to 1,000. Measured at 2,000 workers, one run
	// each: 36,000 jobs/s with 100, 53,000 with 500, 57,000 with 1,000,
	// 50,000 with 2,000 (Work's default, Concurrency).
	ourBatch = 1000
	// ourLease is long enough that no claim expires during a run.
	ourLease = time.Minute
)

// claimSystem is the claim store on one database.
type claimSystem struct {
	store   *postgres.ClaimStore
	pool    *pgxpool.Pool // the store's
	broker  *claim.Broker
	workers int
	// prefetch is the Worker's Prefetch: items held claimed beyond the
	// running handlers.
	prefetch int
	items    []claim.NewItem // reused by Enqueue, which the harness calls from one goroutine at a time
	// kinds makes the items typed args routed by a claim.Workers.
	kinds bool
	// trace, if not nil, times the steps of each pickup (TraceEnv).
	trace *pickupTrace

	cancel context.CancelFunc
	wg     sync.WaitGroup
	err    error // Work's, read after wg.Wait
}

// openClaimStore opens a postgres.ClaimStore behind a claim.Broker on pool,
// worked by Broker.Work with workers handlers.
func openClaimStore(ctx context.Context, pool *pgxpool.Pool, workers int) (System, error) {
	return openClaimStoreWith(ctx, pool, workers, false, false)
}

// openClaimStoreWith is openClaimStore, with items as typed args routed
// by kind if kinds is set, and completed items kept for
// claim.StandardRetention if retention is.
func openClaimStoreWith(ctx context.Context, pool *pgxpool.Pool, workers int, kinds, retention bool) (*claimSystem, error) {
	var opts []postgres.ClaimOption
	if retention {
		opts = append(opts, postgres.WithRetention(claim.StandardRetention))
	}
	store, err := postgres.NewClaimStore(pool, opts...)
	if err != nil {
		return nil, err
	}
	if err := store.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	var (
		cs    claim.Store = store
		trace *pickupTrace
	)
	if os.Getenv(TraceEnv) != "" {
		trace = &pickupTrace{label: fmt.Sprintf("kinds %v, retention %v, %d workers", kinds, retention, workers), out: os.Stderr}
		cs = tracedStore{ClaimStore: store, t: trace}
	}
	broker, err := claim.New(cs)
	if err != nil {
		return nil, err
	}
	return &claimSystem{store: store, pool: pool, broker: broker, workers: workers, kinds: kinds, trace: trace}, nil
}

// ourNoop is the arguments of the no-op job of the kinds settings.
type ourNoop struct{}

func (ourNoop) Kind() string { return "pgcompare_noop" }

// fill grows s.items to n items and returns the first n.
func (s *claimSystem) fill(n int) ([]claim.NewItem, error) {
	for len(s.items) < n {
		it := claim.NewItem{Queue: ourQueue}
		if s.kinds {
			var err error
			if it, err = claim.ArgsItem(ourQueue, ourNoop{}); err != nil {
				return nil, err
			}
		}
		it.MaxAttempts = claim.DefaultMaxAttempts // as the Broker fills it in; EnqueueTx needs it set
		s.items = append(s.items, it)
	}
	return s.items[:n], nil
}

// Enqueue adds n items with one EnqueueMany.
func (s *claimSystem) Enqueue(ctx context.Context, n int) error {
	items, err := s.fill(n)
	if err != nil {
		return err
	}
	if s.trace != nil && n == 1 {
		s.trace.begin()
	}
	_, err = s.broker.EnqueueMany(ctx, items)
	return err
}

// EnqueueTx adds n items with one ClaimStore.EnqueueTx in tx.
func (s *claimSystem) EnqueueTx(ctx context.Context, tx pgx.Tx, n int) error {
	items, err := s.fill(n)
	if err != nil {
		return err
	}
	_, err = s.store.EnqueueTx(ctx, tx, items)
	return err
}

// Start runs Work until Stop. A completion is reported as its handler
// returns; Work stores it right after, and Settled waits for that.
func (s *claimSystem) Start(ctx context.Context, obs Observer) error {
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if s.trace != nil {
		_, _ = s.pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
		s.trace.counts.begin(ctx, s.pool)
	}
	started := obs.Started
	if s.trace != nil {
		started = func(id uint64) { s.trace.mark("handler"); obs.Started(id) }
	}
	handler := func(_ context.Context, c claim.Claim) error {
		started(uint64(c.Item))
		defer obs.Completed()
		return nil
	}
	if s.kinds {
		var ws claim.Workers
		err := claim.AddWorker(&ws, func(_ context.Context, j claim.Job[ourNoop]) error {
			started(uint64(j.Item))
			defer obs.Completed()
			return nil
		})
		if err != nil {
			return err
		}
		handler = ws.Handler()
	}
	w := claim.Worker{
		Queue:         ourQueue,
		Concurrency:   s.workers,
		Prefetch:      s.prefetch,
		BatchSize:     min(s.workers+s.prefetch, ourBatch),
		LeaseDuration: ourLease,
		Handler:       handler,
	}
	s.wg.Go(func() { s.err = s.broker.Work(ctx, w) })
	return nil
}

// Settled polls the table until no item of the queue is left waiting or
// claimed. It asks the claim indexes directly rather than through Counts,
// whose exact count of the kept rows reads an index page per few hundred
// of them: beside a million finished rows that alone would add tens of
// milliseconds to the end of every burn-down.
func (s *claimSystem) Settled(ctx context.Context) error {
	live := settledQuery(s.store.Table())
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		var busy bool
		if err := s.pool.QueryRow(ctx, live, ourQueue).Scan(&busy); err != nil {
			return err
		}
		if !busy {
			if s.trace != nil && !s.trace.reported.Swap(true) {
				s.trace.counts.report(ctx, s.trace.out, s.trace.label, s.pool, s.store.Table())
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// settledQuery returns the statement by which Settled asks whether the
// measured queue ($1) of table has an item waiting or claimed: one search
// per state, each in the partial index of that state. With state IN (1, 3)
// the planner finds no index that holds both and scans the table, 18,000
// pages beside a million kept rows, after every pickup.
func settledQuery(table string) string {
	return fmt.Sprintf("SELECT EXISTS (SELECT 1 FROM %[1]s WHERE queue = $1 AND state = 1) OR EXISTS (SELECT 1 FROM %[1]s WHERE queue = $1 AND state = 3)", table)
}

// Stop ends Work, waits for it, and closes the broker.
func (s *claimSystem) Stop(context.Context) error {
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	if s.trace != nil {
		s.trace.report()
	}
	return errors.Join(s.err, s.broker.Close())
}

// insertFinished adds n completed items of queue to the claim store's
// table, in one statement: completed as the store's settle statement
// leaves them (state 5, finished_at set, no owner), each finished between
// age and age plus an hour ago.
func insertFinished(ctx context.Context, pool *pgxpool.Pool, table, queue string, n int, age time.Duration) error {
	fill := fmt.Sprintf(`INSERT INTO %s (queue, kind, payload, state, attempts, max_attempts, priority, enqueued_at, due, finished_at)
SELECT $1, 'pgcompare_noop', '{}', 5, 1, 25, 0, f - interval '1 minute', f - interval '1 minute', f
FROM (SELECT now() - $3 * interval '1 microsecond' - (g %% 3600) * interval '1 second' AS f FROM generate_series(1, $2) AS g) AS s`, table)
	_, err := pool.Exec(ctx, fill, queue, n, age.Microseconds())
	return err
}

// FillHistory adds n items of the measured queue completed within the
// last hour: kept by the retention of the settings that have one
// (claim.StandardRetention), and due for deletion by a cleaner at once in
// the others.
func (s *claimSystem) FillHistory(ctx context.Context, pool *pgxpool.Pool, n int) (string, error) {
	return s.store.Table(), insertFinished(ctx, pool, s.store.Table(), ourQueue, n, 0)
}

// statsCalls is how many times TimeStats calls each of Queues and Counts.
const statsCalls = 5

// TimeStats times the store's Queues (all queues, the first page) and
// Counts of the measured queue, statsCalls times each, and returns the
// medians.
func (s *claimSystem) TimeStats(ctx context.Context) (queues, counts time.Duration, err error) {
	timeIt := func(f func() error) (time.Duration, error) {
		ds := make([]time.Duration, 0, statsCalls)
		for range statsCalls {
			t0 := time.Now()
			if err := f(); err != nil {
				return 0, err
			}
			ds = append(ds, time.Since(t0))
		}
		return percentile(ds, 50), nil
	}
	queues, err = timeIt(func() error { _, err := s.store.Queues(ctx, claim.QueueQuery{Limit: 100}); return err })
	if err != nil {
		return 0, 0, fmt.Errorf("queues: %w", err)
	}
	counts, err = timeIt(func() error { _, err := s.store.Counts(ctx, ourQueue); return err })
	if err != nil {
		return 0, 0, fmt.Errorf("counts: %w", err)
	}
	return queues, counts, nil
}
