package sqlitecompare

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

// RiverName is River's column.
const RiverName = "River (riversqlite)"

// River's fetch settings: its defaults (a fetch at most every 100 ms after
// an insert in the process, a poll every second) would make its pickup
// latency a matter of configuration; these poll as often as the claim
// store does (sqlite.DefaultPoll) and fetch 2 ms after an insert, as in
// the PostgreSQL comparison's tuned setting.
const (
	riverFetchCooldown     = 2 * time.Millisecond
	riverFetchPollInterval = 5 * time.Millisecond
)

// riverLogger keeps River's warnings and errors and drops the rest.
var riverLogger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// riverNoop is the arguments of the no-op job.
type riverNoop struct{}

func (riverNoop) Kind() string { return "sqlitecompare_noop" }

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

// riverSystem is River on one file, through its SQLite driver on
// database/sql with one connection, as the driver documents.
type riverSystem struct {
	db      *sql.DB
	driver  *riversqlite.Driver
	workers *river.Workers
	client  *river.Client[*sql.Tx] // an insert-only client until Start
	started atomic.Pointer[func(uint64)]
	args    []river.InsertManyParams // reused by EnqueueBatch, which the harness calls from one goroutine at a time

	unsubscribe func()
	stop        chan struct{}
	events      sync.WaitGroup
}

// riverMigrateMu keeps two migrations of one process from racing; those of
// two processes are kept apart by the file's write lock.
var riverMigrateMu sync.Mutex

func openRiver(ctx context.Context, path string, sync Sync) (System, error) {
	db, err := openDB(ctx, path, sync)
	if err != nil {
		return nil, err
	}
	s := &riverSystem{db: db, driver: riversqlite.New(db), stop: make(chan struct{})}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	s.workers = river.NewWorkers()
	if err := river.AddWorkerSafely(s.workers, &riverWorker{started: &s.started}); err != nil {
		_ = db.Close()
		return nil, err
	}
	// Until Start, an insert-only client: no queues, no workers running.
	s.client, err = river.NewClient(s.driver, &river.Config{Logger: riverLogger, Workers: s.workers})
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

func (s *riverSystem) migrate(ctx context.Context) error {
	riverMigrateMu.Lock()
	defer riverMigrateMu.Unlock()
	m, err := rivermigrate.New(s.driver, &rivermigrate.Config{Logger: riverLogger})
	if err != nil {
		return err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrate: %w", err)
	}
	return nil
}

// EnqueueOne inserts one job with Insert.
func (s *riverSystem) EnqueueOne(ctx context.Context) error {
	_, err := s.client.Insert(ctx, riverNoop{}, nil)
	return err
}

// EnqueueBatch inserts n jobs with one InsertMany.
func (s *riverSystem) EnqueueBatch(ctx context.Context, n int) error {
	for len(s.args) < n {
		s.args = append(s.args, river.InsertManyParams{Args: riverNoop{}})
	}
	_, err := s.client.InsertMany(ctx, s.args[:n])
	return err
}

// Start replaces the insert-only client with one that works the default
// queue with workers workers, and starts it. A completion counts when
// River's subscription reports it: after River's completer has stored it.
func (s *riverSystem) Start(ctx context.Context, workers int, obs Observer) error {
	client, err := river.NewClient(s.driver, &river.Config{
		Logger:            riverLogger,
		Workers:           s.workers,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		FetchCooldown:     riverFetchCooldown,
		FetchPollInterval: riverFetchPollInterval,
	})
	if err != nil {
		return err
	}
	s.client = client
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
					riverLogger.Error("sqlitecompare: River job not completed", "kind", ev.Kind, "job", ev.Job.ID)
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

// Stop stops the client and the subscription, and closes the file.
func (s *riverSystem) Stop(ctx context.Context) error {
	var err error
	if s.unsubscribe != nil {
		err = s.client.Stop(ctx)
		s.unsubscribe()
	}
	close(s.stop)
	s.events.Wait()
	return errors.Join(err, s.db.Close())
}
