package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	sqlite3 "modernc.org/sqlite"
	lib "modernc.org/sqlite/lib"
)

// writeOp is one caller's write: run does its work inside the batch's
// transaction and records its results in variables of the caller's; err
// is its answer once done is closed.
//
// run is given the batch's context, never the caller's: the driver
// interrupts a statement whose context ends, and SQLite answers an
// interrupted write by rolling back the whole transaction, every other
// caller's writes with it, after which the batch's next statements would
// each commit on their own. ctx is only read, to drop the write when its
// caller gave up before the batch reached it.
type writeOp struct {
	ctx context.Context
	op  string
	// single: run changes the file with one statement at most, which
	// SQLite undoes by itself if it fails, so it needs no savepoint.
	single bool
	// toEnd: a caller that gives up once its write was taken still
	// waits for the batch's answer, instead of returning at once.
	toEnd bool
	run   func(ctx context.Context, tx *sql.Tx) error
	// after, if set, runs once the batch committed, before done is
	// closed: it wakes waiters of what the op changed.
	after func()
	err   error
	done  chan struct{}
}

// committer is group commit: the writes of many goroutines share one
// transaction, and so one sync of the write-ahead log. Its goroutine takes
// whatever writes are pending, runs them in one transaction (each write of
// several statements inside a savepoint, so that one write's failure undoes
// only that write), commits,
// and only then answers them; writes that arrive meanwhile wait for the next
// batch. A caller's nil error thus means its write is in the file. pending
// holds one entry per waiting caller, so it is bounded by the number of
// calling goroutines.
type committer struct {
	d    *db
	max  int
	kick chan struct{} // capacity 1

	// transactions counts the transactions committed, for tests.
	transactions atomic.Int64
	// wrote says whether the batch attempted last changed a row; only the
	// committer's goroutine uses it.
	wrote bool

	mu      sync.Mutex
	pending []*writeOp
	closed  bool
}

func newCommitter(d *db, max int) *committer {
	return &committer{d: d, max: max, kick: make(chan struct{}, 1)}
}

// do runs fn in the next batch and waits for the batch's commit; single
// says that fn changes the file with one statement at most. fn runs under
// the batch's context, which only the store's Close ends, and must use it
// for every statement.
//
// When ctx ends first, do returns ctx.Err() at once. If the batch had not
// taken the write yet, it is withdrawn and changes nothing; if it had, the
// batch goes on without the caller, and the write may be in the file,
// whole (as with any database call whose context ends while it commits).
// The other writes of the batch are untouched either way.
func (c *committer) do(ctx context.Context, op string, single bool, fn func(ctx context.Context, tx *sql.Tx) error, after func()) error {
	return c.submit(&writeOp{ctx: ctx, op: op, single: single, run: fn, after: after})
}

// doToEnd is do for a caller that must learn what became of a write taken
// into a batch: when ctx ends after the batch took the write, it waits for
// the batch and returns the write's answer, nil if it committed.
func (c *committer) doToEnd(ctx context.Context, op string, single bool, fn func(ctx context.Context, tx *sql.Tx) error, after func()) error {
	return c.submit(&writeOp{ctx: ctx, op: op, single: single, toEnd: true, run: fn, after: after})
}

func (c *committer) submit(w *writeOp) error {
	ctx := w.ctx
	w.done = make(chan struct{})
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return closedError(w.op)
	}
	c.pending = append(c.pending, w)
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
	select {
	case <-w.done:
		return w.err
	case <-ctx.Done():
	}
	c.mu.Lock()
	if i := slices.Index(c.pending, w); i >= 0 {
		c.pending = slices.Delete(c.pending, i, i+1)
		c.mu.Unlock()
		return ctx.Err()
	}
	c.mu.Unlock()
	if !w.toEnd {
		// Taken: the batch applies it or not, without this caller, who
		// reads none of what it writes.
		return ctx.Err()
	}
	<-w.done
	return w.err
}

func (c *committer) take() []*writeOp {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(len(c.pending), c.max)
	batch := slices.Clone(c.pending[:n])
	c.pending = slices.Delete(c.pending, 0, n)
	return batch
}

// run is the committer's goroutine.
func (c *committer) run() {
	for {
		select {
		case <-c.d.ctx.Done():
			c.mu.Lock()
			c.closed = true
			left := c.pending
			c.pending = nil
			c.mu.Unlock()
			for _, w := range left {
				w.err = closedError(w.op)
				close(w.done)
			}
			return
		case <-c.kick:
		}
		// Let the goroutines that are ready run before taking the batch:
		// writes submitted at one moment then share it. A worker's
		// settlement and its next claim, both sent as its handler
		// returns, thus cost one commit instead of two.
		runtime.Gosched()
		for {
			batch := c.take()
			if len(batch) == 0 {
				break
			}
			c.commitBatch(batch)
		}
	}
}

// close makes later writes fail; the goroutine fails the pending ones.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

// commitBatch runs batch in one transaction, trying it again while the
// file is busy, and answers every write. The transaction and every
// statement in it run under the store's context, which ends only at
// Close: database/sql then rolls the transaction back and runs no further
// statement in it, so the batch fails whole.
func (c *committer) commitBatch(batch []*writeOp) {
	ctx := c.d.ctx
	err := retryBusy(ctx, c.d.cfg.busy, func() error { return c.attempt(ctx, batch) })
	if errors.Is(err, errNothingCommitted) {
		// The batch's one write failed on its own: its error is its answer.
		close(batch[0].done)
		return
	}
	if err != nil && c.d.closed.Load() {
		err = closedError("commit")
	}
	if err == nil {
		c.transactions.Add(1)
		// A batch that changed no row (an empty claim, a stale settle)
		// wakes nobody: waking on it would send an idle worker straight
		// back to claim, in a loop of empty write transactions.
		if c.wrote {
			c.d.watch.changed()
		}
	}
	for _, w := range batch {
		switch {
		case err != nil:
			w.err = c.d.storage(w.op, err)
		case w.err == nil && w.after != nil:
			w.after()
		}
		close(w.done)
	}
}

// attempt runs the batch once: BEGIN IMMEDIATE, each write in a savepoint,
// COMMIT. A busy error anywhere undoes it all and is returned, for the
// batch to be tried again. Any other error of a write is that write's,
// the others going on; an error of the transaction itself is returned.
func (c *committer) attempt(ctx context.Context, batch []*writeOp) (err error) {
	tx, err := c.d.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	before, err := totalChanges(ctx, tx)
	if err != nil {
		return err
	}
	one := len(batch) == 1
	for _, w := range batch {
		w.err = nil
		if err := w.ctx.Err(); err != nil {
			w.err = err
			continue
		}
		if one {
			if werr := w.run(ctx, tx); werr != nil {
				if isBusy(werr) || isFatal(werr) {
					return werr
				}
				w.err = werr
				_ = tx.Rollback()
				return errNothingCommitted
			}
			break
		}
		if w.single {
			if werr := w.run(ctx, tx); werr != nil {
				if isBusy(werr) || isFatal(werr) {
					return werr
				}
				w.err = werr
			}
			continue
		}
		if err := c.exec(ctx, tx, sqlSavepoint); err != nil {
			return err
		}
		if werr := w.run(ctx, tx); werr != nil {
			if isBusy(werr) || isFatal(werr) {
				return werr
			}
			w.err = werr
			if err := c.exec(ctx, tx, sqlRollbackTo); err != nil {
				return err
			}
		}
		if err := c.exec(ctx, tx, sqlReleaseSavepoint); err != nil {
			return err
		}
	}
	after, err := totalChanges(ctx, tx)
	if err != nil {
		return err
	}
	c.wrote = after != before
	return tx.Commit()
}

// totalChanges is the number of rows the write connection has inserted,
// updated or deleted since it opened.
func totalChanges(ctx context.Context, tx *sql.Tx) (n int64, err error) {
	err = tx.QueryRowContext(ctx, "SELECT total_changes()").Scan(&n)
	return n, err
}

// errNothingCommitted reports a batch of one write that failed and was
// rolled back; the write's error is set.
var errNothingCommitted = errors.New("nothing committed")

// isFatal reports a failure of the file rather than of one write: a full,
// read-only or corrupt file, an I/O error. It fails the whole batch: SQLite
// rolls back the whole transaction on some of these (an I/O error, a full
// file, no memory, an interrupt), and the batch must not go on outside
// it.
func isFatal(err error) bool {
	var se *sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case lib.SQLITE_IOERR, lib.SQLITE_NOMEM, lib.SQLITE_INTERRUPT:
		return true
	}
	kind, _ := kindOf(err)
	return kind != nil
}

// exec runs one of the prepared statements in tx.
func (c *committer) exec(ctx context.Context, tx *sql.Tx, query string) error {
	st, err := c.d.txStmt(ctx, tx, query)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx)
	return err
}
