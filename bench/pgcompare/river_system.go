package pgcompare

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// RiverSettings are the three ways River is measured: its defaults with
// 100 workers; FetchCooldown 2 ms and FetchPollInterval 20 ms with 100
// workers; and those with 2,000 workers, the setting of River's own
// benchmark. All use a pool of DefaultPoolSize connections.
func RiverSettings() []Setting {
	return []Setting{
		RiverSetting("River defaults (100 workers)", river.Config{}, 100),
		RiverSetting("River tuned (100 workers)", river.Config{FetchCooldown: 2 * time.Millisecond, FetchPollInterval: 20 * time.Millisecond}, 100),
		RiverSetting("River bench (2,000 workers)", river.Config{FetchCooldown: 2 * time.Millisecond, FetchPollInterval: 20 * time.Millisecond}, 2000),
	}
}

// RiverSetting is River (github.com/riverqueue/river, through its pgx v5
// driver) with the fetch settings of base and workers workers on its
// default queue. Open runs River's migrations on the fresh database.
func RiverSetting(name string, base river.Config, workers int) Setting {
	return Setting{
		Name:     name,
		PoolSize: DefaultPoolSize,
		Open: func(ctx context.Context, pool *pgxpool.Pool) (System, error) {
			return openRiver(ctx, pool, base, workers)
		},
	}
}

// riverLogger keeps River's warnings and errors and drops the rest.
var riverLogger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// riverNoop is the arguments of the no-op job.
type riverNoop struct{}

func (riverNoop) Kind() string { return "pgcompare_noop" }

// riverWorker calls the observer's Started and succeeds.
type riverWorker struct {
	river.WorkerDefaults[riverNoop]
	started *atomic.Pointer[func(uint64)]
}

func (w *riverWorker) Work(_ context.Context, j *river.Job[riverNoop]) error {
	if f := w.started.Load(); f != nil {
		(*f)(uint64(j.ID))
	}
	return nil
}

// riverSystem is River on one database.
type riverSystem struct {
	client  *river.Client[pgx.Tx]
	started atomic.Pointer[func(uint64)]
	args    []river.InsertManyParams // reused by Enqueue, which the harness calls from one goroutine at a time

	unsubscribe func()
	stop        chan struct{}
	events      sync.WaitGroup
}

func openRiver(ctx context.Context, pool *pgxpool.Pool, base river.Config, workers int) (*riverSystem, error) {
	driver := riverpgxv5.New(pool)
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: riverLogger})
	if err != nil {
		return nil, err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("river migrate: %w", err)
	}
	s := &riverSystem{stop: make(chan struct{})}
	ws := river.NewWorkers()
	if err := river.AddWorkerSafely(ws, &riverWorker{started: &s.started}); err != nil {
		return nil, err
	}
	cfg := base
	cfg.Logger = riverLogger
	cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}}
	cfg.Workers = ws
	s.client, err = river.NewClient(driver, &cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Enqueue inserts n jobs with one InsertMany.
func (s *riverSystem) Enqueue(ctx context.Context, n int) error {
	for len(s.args) < n {
		s.args = append(s.args, river.InsertManyParams{Args: riverNoop{}})
	}
	_, err := s.client.InsertMany(ctx, s.args[:n])
	return err
}

// EnqueueTx inserts n jobs with one InsertManyTx in tx.
func (s *riverSystem) EnqueueTx(ctx context.Context, tx pgx.Tx, n int) error {
	for len(s.args) < n {
		s.args = append(s.args, river.InsertManyParams{Args: riverNoop{}})
	}
	_, err := s.client.InsertManyTx(ctx, tx, s.args[:n])
	return err
}

// Start starts the client. A completion counts when River's subscription
// reports it: after River's completer has stored it.
func (s *riverSystem) Start(ctx context.Context, obs Observer) error {
	s.started.Store(&obs.Started)
	events, unsubscribe := s.client.SubscribeConfig(&river.SubscribeConfig{
		// Events that overflow the channel are dropped; this one holds
		// more than any run here enqueues.
		ChanSize: 1 << 20,
		Kinds:    []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled},
	})
	s.unsubscribe = unsubscribe
	s.events.Go(func() {
		for {
			select {
			case <-s.stop:
				return
			case ev, ok := <-events:
				if !ok {
					return
				}
				if ev.Kind != river.EventKindJobCompleted {
					riverLogger.Error("pgcompare: River job not completed", "kind", ev.Kind, "job", ev.Job.ID)
					continue
				}
				obs.Completed()
			}
		}
	})
	// The client stops through Stop, not through this context.
	return s.client.Start(context.WithoutCancel(ctx))
}

// Settled returns at once: River reports completions once stored.
func (s *riverSystem) Settled(context.Context) error { return nil }

// Stop stops the client and the subscription.
func (s *riverSystem) Stop(ctx context.Context) error {
	var err error
	if s.unsubscribe != nil {
		err = s.client.Stop(ctx)
		s.unsubscribe()
	}
	close(s.stop)
	s.events.Wait()
	return err
}

// FillHistory adds n jobs completed within the last hour to river_job, as
// River's completer leaves them: kept by River's job cleaner, whose
// default retention of completed jobs is 24 hours.
func (s *riverSystem) FillHistory(ctx context.Context, pool *pgxpool.Pool, n int) (string, error) {
	const fill = `INSERT INTO river_job (args, attempt, attempted_at, attempted_by, created_at, finalized_at, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags)
SELECT '{}', 1, f, '{pgcompare}', f - interval '1 minute', f, 'pgcompare_noop', 25, '{}', 1, 'default', f - interval '1 minute', 'completed', '{}'
FROM (SELECT now() - (g % 3600) * interval '1 second' AS f FROM generate_series(1, $1) AS g) AS s`
	_, err := pool.Exec(ctx, fill, n)
	return "river_job", err
}
