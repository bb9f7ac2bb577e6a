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
	wtx    *wtx // write's one connection, held for the committer once open
	read   *sql.DB
	commit *committer
	watch  *watcher

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
	d := &db{cfg: c, path: abs, clock: c.clock}
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
	d.watch.watchFiles(&d.wg)
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
	// The committer holds the one writer connection from now on, and
	// runs its transactions on it statement by statement.
	conn, err := d.write.Conn(ctx)
	if err != nil {
		return fail(err)
	}
	d.wtx = &wtx{conn: conn, stmts: map[string]*sql.Stmt{}}
	// The committer waits for the write lock itself (committer.begin).
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		return fail(err)
	}
	for _, q := range preparedWrites {
		if _, err := d.wtx.stmt(ctx, q); err != nil {
			return fail(err)
		}
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

// readNow runs f in a read transaction on a reader connection, with now
// read from the store's clock once the transaction's snapshot is taken.
// Every row the snapshot holds was written before now, so a read that
// compares due times with now never finds an item written visible to be
// due later (delayed, which it never was), as it could with a time read
// before the snapshot and a write committed in between.
func (d *db) readNow(ctx context.Context, f func(tx *sql.Tx, now int64) error) error {
	return d.reading(ctx, func() error {
		tx, err := d.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		if hook := d.cfg.hooks.beforeSnapshot; hook != nil {
			hook()
		}
		// A deferred transaction takes its snapshot at its first read.
		var n int
		if err := tx.QueryRowContext(ctx, sqlSnapshot).Scan(&n); err != nil {
			return err
		}
		return f(tx, d.now())
	})
}

// sqlSnapshot is a read that starts a read transaction's snapshot.
const sqlSnapshot = "SELECT count(*) FROM (SELECT 1 FROM sqlite_schema LIMIT 1)"

// preparedWrites are the statements prepared as the file opens, on the
// writer connection; others are prepared there when first run.
var preparedWrites = []string{sqlBegin, sqlCommit, sqlRollback, sqlInsert, sqlClaimable, sqlTake, sqlTakeNext, sqlExtend,
	sqlComplete, sqlCompleteKeep, sqlMove, sqlAcquire, sqlRenew, sqlRelease, sqlSavepoint, sqlRollbackTo,
	sqlReleaseSavepoint, sqlTotalChanges}

// The statements of a write transaction. BEGIN IMMEDIATE takes the write
// lock at once: a deferred transaction that read first could not be
// upgraded once another process wrote, and would fail busy at once.
const (
	sqlBegin    = "BEGIN IMMEDIATE"
	sqlCommit   = "COMMIT"
	sqlRollback = "ROLLBACK"
)

// The savepoint around each write of a batch.
const (
	sqlSavepoint        = "SAVEPOINT w"
	sqlRollbackTo       = "ROLLBACK TO w"
	sqlReleaseSavepoint = "RELEASE w"
	// sqlTotalChanges counts the rows the connection changed, to tell a
	// batch that changed none.
	sqlTotalChanges = "SELECT total_changes()"
)

// wtx is the writer connection, on which the committer runs its write
// transactions with BEGIN IMMEDIATE and COMMIT: a statement of a batch runs
// on it with no database/sql transaction around it, and each query text is
// prepared on it once, the first time it runs, and kept until the file
// closes. Once the file is open only the committer's batches use it, one at
// a time (its flusher's, or a lone caller's own, see sqlclaim.CallerRuns;
// the schema's migration runs before), so it needs no lock of its own; the
// statements are the constants of this package, so their cache is bounded.
type wtx struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// stmt returns query prepared on the connection.
func (t *wtx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := t.stmts[query]; ok {
		return st, nil
	}
	st, err := t.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	t.stmts[query] = st
	return st, nil
}

// ExecContext runs query, prepared once, with args.
func (t *wtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// QueryRowContext runs query, prepared once, with args, for one row; a
// failure to prepare it is the row's error.
func (t *wtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := t.stmt(ctx, query)
	if err != nil {
		// A statement that cannot be prepared fails again as a query,
		// through the connection: the row carries its error.
		return t.conn.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// close closes the statements and gives the connection back.
func (t *wtx) close() {
	for _, st := range t.stmts {
		_ = st.Close()
	}
	_ = t.conn.Close()
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
	if d.wtx != nil {
		d.wtx.close()
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
