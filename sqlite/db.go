package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the pure-Go driver, registered as "sqlite"

	"github.com/leasehold/lease"
)

// db is one open database file: one connection that writes (every write
// goes through the committer, in transactions begun with BEGIN
// IMMEDIATE), a small pool of connections that read, and a watcher that
// learns of other processes' commits.
type db struct {
	cfg    config
	path   string // absolute, named by storage errors
	clock  lease.Clock
	write  *sql.DB
	read   *sql.DB
	commit *committer
	watch  *watcher

	stmts map[string]*sql.Stmt // prepared on the writer connection; read-only once open

	closed    atomic.Bool
	closeOnce sync.Once
	ctx       context.Context // ends at close
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// dsn is the modernc.org/sqlite data source name of path: a file: URI,
// with the pragmas every connection needs.
func dsn(path string, c config, writer bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(c.busy.Milliseconds(), 10)+")")
	q.Add("_pragma", "synchronous("+c.sync.String()+")")
	if writer {
		// Every write transaction takes the write lock when it begins:
		// a deferred one that read first could not be upgraded once
		// another process wrote, and would fail busy at once.
		q.Set("_txlock", "immediate")
		if c.maxPage > 0 {
			q.Add("_pragma", "max_page_count("+strconv.FormatInt(c.maxPage, 10)+")")
		}
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	return u.String()
}

// openDB opens (creating if need be) the file at path in WAL mode, brings
// its schema up to date, and starts the committer and the watcher.
func openDB(ctx context.Context, op, path string, opts []Option) (*db, error) {
	if ctx == nil {
		return nil, invalid(op, "ctx", "must not be nil")
	}
	if err := checks.Name(op, "path", path); err != nil {
		return nil, err
	}
	c := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return nil, invalid(op, "opts", "contains a nil Option")
		}
		o.apply(&c)
	}
	if err := c.check(op); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, invalid(op, "path", err.Error())
	}
	d := &db{cfg: c, path: abs, clock: c.clock, stmts: map[string]*sql.Stmt{}}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	if err := d.open(ctx, op, abs); err != nil {
		d.cancel()
		d.closeConns()
		return nil, err
	}
	d.commit = newCommitter(d, c.batch)
	d.watch = newWatcher(d)
	if err := d.watch.start(ctx); err != nil {
		d.cancel()
		d.closeConns()
		return nil, d.storage(op, err)
	}
	d.commit.start(&d.wg)
	d.wg.Go(d.watch.run)
	return d, nil
}

func (d *db) open(ctx context.Context, op, path string) error {
	fail := func(err error) error { return d.storage(op, err) }
	var err error
	if d.write, err = sql.Open("sqlite", dsn(path, d.cfg, true)); err != nil {
		return fail(err)
	}
	d.write.SetMaxOpenConns(1)
	d.write.SetMaxIdleConns(1)
	d.write.SetConnMaxLifetime(0)
	d.write.SetConnMaxIdleTime(0)
	// WAL lets readers in every process read while one writes. Setting it
	// is the first write to a new file; for an existing one it reads the
	// header, so a file that is not a database fails here.
	if err := retryBusy(ctx, d.cfg.busy, func() error {
		var mode string
		if err := d.write.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
			return err
		}
		if mode != "wal" {
			return errors.New("journal_mode is " + mode + ", not wal")
		}
		return nil
	}); err != nil {
		return fail(err)
	}
	if err := migrate(ctx, d); err != nil {
		return fail(err)
	}
	// Prepared here, before any transaction holds the one writer
	// connection.
	for _, q := range preparedWrites {
		st, err := d.write.PrepareContext(ctx, q)
		if err != nil {
			return fail(err)
		}
		d.stmts[q] = st
	}
	if d.read, err = sql.Open("sqlite", dsn(path, d.cfg, false)); err != nil {
		return fail(err)
	}
	// One more than the readers: the watcher keeps one for itself.
	d.read.SetMaxOpenConns(d.cfg.readers + 1)
	d.read.SetMaxIdleConns(d.cfg.readers + 1)
	if err := d.read.PingContext(ctx); err != nil {
		return fail(err)
	}
	return nil
}

// retryBusy runs f until it returns something other than a busy error, for
// up to about busy more after the first busy answer (each attempt has
// already waited out the busy timeout inside SQLite, unless the file was
// locked in a way no wait resolves).
func retryBusy(ctx context.Context, busy time.Duration, f func() error) error {
	var deadline time.Time
	wait := time.Millisecond
	for {
		err := f()
		if err == nil || !isBusy(err) {
			return err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(busy)
		} else if time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// reading runs f, a read on the reader pool, trying it again while the
// file is busy (a reader can be, briefly, while another connection
// recovers or checkpoints the write-ahead log).
func (d *db) reading(ctx context.Context, f func() error) error {
	return retryBusy(ctx, d.cfg.busy, f)
}

// preparedWrites are the statements prepared once on the writer
// connection.
var preparedWrites = []string{sqlInsert, sqlClaimable, sqlTake, sqlExtend, sqlComplete, sqlCompleteKeep, sqlMove,
	sqlAcquire, sqlRenew, sqlRelease, sqlSavepoint, sqlRollbackTo, sqlReleaseSavepoint, sqlTotalChanges}

// The savepoint around each write of a batch.
const (
	sqlSavepoint        = "SAVEPOINT w"
	sqlRollbackTo       = "ROLLBACK TO w"
	sqlReleaseSavepoint = "RELEASE w"
	// sqlTotalChanges counts the rows the connection changed, to tell a
	// batch that changed none.
	sqlTotalChanges = "SELECT total_changes()"
)

// txStmt returns query, one of preparedWrites, for tx; others are
// prepared in tx.
func (d *db) txStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if st, ok := d.stmts[query]; ok {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, query)
}

// storage wraps err, a failure of the file in op, as a storage error
// naming the file.
func (d *db) storage(op string, err error) error { return storage(op, d.path, err) }

// now is the store's time, in nanoseconds since the Unix epoch: the
// instant every deadline in the file is written in.
func (d *db) now() int64 { return d.clock.Now().UnixNano() }

// close stops the committer and the watcher and closes the connections.
// Writes waiting for a batch fail with a closed error.
func (d *db) close() {
	d.closeOnce.Do(func() {
		d.closed.Store(true)
		d.cancel()
		d.commit.close()
		d.watch.close()
		d.wg.Wait()
		d.closeConns()
	})
}

func (d *db) closeConns() {
	for _, s := range d.stmts {
		_ = s.Close()
	}
	if d.read != nil {
		_ = d.read.Close()
	}
	if d.write != nil {
		_ = d.write.Close()
	}
}

// at converts nanoseconds since the epoch to a time, in UTC.
func at(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// addNanos is t+d, saturating.
func addNanos(t int64, d time.Duration) int64 {
	if s := t + int64(d); s >= t {
		return s
	}
	return 1<<63 - 1
}
