package sqlitecompare

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"maragu.dev/goqite"
	"maragu.dev/goqite/jobs"
)

// GoqiteName is goqite's column.
const GoqiteName = "goqite (jobs.Runner)"

const (
	goqiteQueue = "sqlitecompare"
	goqiteJob   = "noop"
	// goqitePoll is the runner's poll interval: as often as the claim
	// store polls (sqlite.DefaultPoll), against goqite's default of 100 ms.
	goqitePoll = 5 * time.Millisecond
)

// goqiteSchema is goqite's SQLite schema (schema_sqlite.sql of its
// repository, which the module does not export), made idempotent so that
// a second process can open the same file.
const goqiteSchema = `
create table if not exists goqite (
  id text primary key default ('m_' || lower(hex(randomblob(16)))),
  created text not null default (strftime('%Y-%m-%dT%H:%M:%fZ')),
  updated text not null default (strftime('%Y-%m-%dT%H:%M:%fZ')),
  queue text not null,
  body blob not null,
  timeout text not null default (strftime('%Y-%m-%dT%H:%M:%fZ')),
  received integer not null default 0,
  priority integer not null default 0
) strict;
create trigger if not exists goqite_updated_timestamp after update on goqite begin
  update goqite set updated = strftime('%Y-%m-%dT%H:%M:%fZ') where id = old.id;
end;
create index if not exists goqite_queue_priority_created_idx on goqite (queue, priority desc, created);
`

// goqiteSystem is goqite's queue and its jobs.Runner on one file, through
// database/sql with one connection, as goqite documents.
type goqiteSystem struct {
	db    *sql.DB
	queue *goqite.Queue
	// last is the last message's number: goqite's jobs handler is given
	// the body alone, so each body carries its message's number (8 bytes)
	// for the check that every message ran once.
	last atomic.Uint64

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func openGoqite(ctx context.Context, path string, sync Sync) (System, error) {
	db, err := openDB(ctx, path, sync)
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, goqiteSchema); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("goqite schema: %w", err)
	}
	return &goqiteSystem{db: db, queue: goqite.New(goqite.NewOpts{DB: db, Name: goqiteQueue})}, nil
}

// EnqueueOne sends one job message with jobs.Create.
func (s *goqiteSystem) EnqueueOne(ctx context.Context) error {
	_, err := jobs.Create(ctx, s.queue, goqiteJob, s.message())
	return err
}

// message is the next message, its body its number.
func (s *goqiteSystem) message() goqite.Message {
	return goqite.Message{Body: binary.LittleEndian.AppendUint64(nil, s.last.Add(1))}
}

// EnqueueBatch sends n job messages with jobs.CreateTx in one transaction:
// goqite has no batch call, and this is how its users batch.
func (s *goqiteSystem) EnqueueBatch(ctx context.Context, n int) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	for range n {
		if _, err := jobs.CreateTx(ctx, tx, s.queue, goqiteJob, s.message()); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Start runs a jobs.Runner limited to workers jobs at once. The runner
// deletes a message after its job returns and does not report it, so a
// completion is reported as the job returns and Settled waits for the
// deletes.
func (s *goqiteSystem) Start(ctx context.Context, workers int, obs Observer) error {
	r := jobs.NewRunner(jobs.NewRunnerOpts{Limit: workers, PollInterval: goqitePoll, Queue: s.queue})
	r.Register(goqiteJob, func(_ context.Context, body []byte) error {
		var id uint64
		if len(body) == 8 {
			id = binary.LittleEndian.Uint64(body)
		}
		obs.Started(id)
		defer obs.Completed()
		return nil
	})
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.wg.Go(func() { r.Start(ctx) })
	return nil
}

// Settled polls the table until no message of the queue is left.
func (s *goqiteSystem) Settled(ctx context.Context) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		var n int
		if err := s.db.QueryRowContext(ctx, "select count(*) from goqite where queue = ?", goqiteQueue).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Stop stops the runner, waits for its jobs, and closes the file.
func (s *goqiteSystem) Stop(context.Context) error {
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	return s.db.Close()
}
