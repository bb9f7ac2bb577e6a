package sqlite

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	sqlite3 "modernc.org/sqlite"
	lib "modernc.org/sqlite/lib"

	"github.com/leasehold/lease/internal/sqlclaim"
)

// write is one caller's write, the request of its call in the
// committer's batcher: run does its work inside the batch's transaction
// and records its results in variables of the caller's; the call's Err is
// its answer.
//
// run is given the batch's context, never the caller's: the driver
// interrupts a statement whose context ends, and SQLite answers an
// interrupted write by rolling back the whole transaction, every other
// caller's writes with it, after which the batch's next statements would
// each commit on their own. The caller's context is only read, to drop
// the write when its caller gave up before the batch reached it.
type write struct {
	// single: run changes the file with one statement at most, which
	// SQLite undoes by itself if it fails, so it needs no savepoint; or
	// its other statements make changes that stand on their own, that any
	// later write would make too (a claim burying an expired claim on its
	// last attempt before taking its one item).
	single bool
	run    func(ctx context.Context, tx *wtx) error
	// after, if set, runs once the batch committed, before the caller is
	// answered: it wakes waiters of what the write changed.
	after func()
}

// writeCall is one caller's write in the batcher.
type writeCall = sqlclaim.Call[write, struct{}]

// committer is group commit on the engine's batcher: the writes of many
// goroutines share one transaction, and so one sync of the write-ahead
// log. Its one flusher takes whatever writes are pending, runs them in
// one transaction (each write of several statements inside a savepoint,
// so that one write's failure undoes only that write), commits, and only
// then answers them; writes that arrive meanwhile wait for the next
// batch. A caller's nil error thus means its write is in the file.
type committer struct {
	d *db
	b *sqlclaim.Batcher[write, struct{}]

	// transactions counts the transactions committed, for tests.
	transactions atomic.Int64
	// locks counts the write transactions begun, each taking the file's
	// write lock, and unlocks those ended, releasing it: while they differ
	// this store holds the lock, and no other process can write the file.
	// The watcher tells by them when a read of data_version must see the
	// commit of another process's write (watcher.wroteFile).
	locks, unlocks atomic.Int64
	// woke is the number (in locks) of the last write lock whose
	// transaction committed a change and then woke every waiter
	// (watcher.committed), and lock that of the batch under way, which
	// only it uses.
	woke atomic.Int64
	lock int64
	// wrote says whether the batch attempted last changed a row; only the
	// batch under way uses it (one at a time).
	wrote bool
	// changes is the writer connection's total_changes() as the last
	// batch ended, when known: nothing else runs on that connection
	// between batches, so the next batch starts from it without reading
	// it. Only the batch under way uses them (one at a time).
	changes      int64
	changesKnown bool
}

func newCommitter(d *db, max int) *committer {
	c := &committer{d: d}
	// One flusher: the file has one writer. Gather: a worker's settlement
	// and its next claim, both sent as its handler returns, then cost one
	// commit instead of two.
	// CallerRuns: a write that finds the committer idle commits on its
	// caller's goroutine, sparing the hand-offs to the flusher and back.
	c.b = sqlclaim.NewBatcher(sqlclaim.BatcherConfig{Max: max, Flushers: 1, Gather: true, CallerRuns: true,
		Closed: closedError}, c.commitBatch)
	return c
}

// start starts the flusher, counted in wg, until the store's context
// ends; then it fails the writes still pending with a closed error.
func (c *committer) start(wg *sync.WaitGroup) { c.b.Start(c.d.ctx, wg) }

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
//
// A write that finds the committer idle, with no other write pending,
// commits on the caller's goroutine rather than the flusher's, sparing
// two hand-offs between goroutines: nothing could share its commit. Its
// ctx then ends only its wait for the write lock (while another process
// holds it), with ctx.Err() and nothing written; once its transaction
// began, do waits for the commit, a matter of one sync, and returns what
// became of the write.
func (c *committer) do(ctx context.Context, op string, single bool, fn func(ctx context.Context, tx *wtx) error, after func()) error {
	_, err := c.b.Do(ctx, &writeCall{Op: op, Req: write{single: single, run: fn, after: after}})
	return err
}

// doToEnd is do for a caller that must learn what became of a write taken
// into a batch: when ctx ends after the batch took the write, it waits for
// the batch and returns the write's answer, nil if it committed.
func (c *committer) doToEnd(ctx context.Context, op string, single bool, fn func(ctx context.Context, tx *wtx) error, after func()) error {
	_, err := c.b.Do(ctx, &writeCall{Op: op, ToEnd: true, Req: write{single: single, run: fn, after: after}})
	return err
}

// close makes later writes fail; the flusher fails the pending ones.
func (c *committer) close() { c.b.Close() }

// commitBatch runs batch in one transaction, trying it again while the
// file is busy, and answers every write. The transaction and every
// statement in it run under the store's context, which ends only at
// Close: database/sql then rolls the transaction back and runs no further
// statement in it, so the batch fails whole. A batch that its caller runs
// (sqlclaim.Call.ByCaller) waits for the write lock only while the
// caller's context lasts too: a caller that gives up before its
// transaction began is answered with its context's error, nothing
// written; once it began, the caller waits for its end and its answer.
func (c *committer) commitBatch(ctx context.Context, batch []*writeCall) error {
	// A caller that runs its batch waits for its end: its waits for the
	// write lock end with its context too.
	wait, stop := sqlclaim.CallerBound(ctx, batch)
	defer stop()
	byCaller := len(batch) == 1 && batch[0].ByCaller()
	err := retryBusy(wait, c.d.cfg.busy, func() error { return c.attempt(ctx, wait, batch) })
	if errors.Is(err, errNothingCommitted) {
		// The batch's one write failed on its own: its error is its answer.
		return nil
	}
	if err != nil && c.d.closed.Load() {
		err = closedError("commit")
	} else if err != nil && byCaller && batch[0].CallerErr() != nil {
		// The caller gave up while its write waited for the lock, before
		// it changed anything (the statements after BEGIN do not end with
		// it): its context's error is its answer.
		batch[0].Err = batch[0].CallerErr()
		return nil
	}
	if err == nil {
		c.transactions.Add(1)
		// A batch that changed no row (an empty claim, a stale settle)
		// wakes nobody: waking on it would send an idle worker straight
		// back to claim, in a loop of empty write transactions.
		if c.wrote {
			c.d.watch.committed()
			c.woke.Store(c.lock)
		}
	}
	for _, w := range batch {
		switch {
		case err != nil:
			w.Err = c.d.storage(w.Op, err)
		case w.Err == nil && w.Req.after != nil:
			w.Req.after()
		}
	}
	return nil
}

// attempt runs the batch once: BEGIN IMMEDIATE, each write in a savepoint,
// COMMIT. BEGIN, which waits for the write lock while another process
// holds it, runs under wait; every other statement under ctx. A busy error
// anywhere undoes it all and is returned, for the batch to be tried again.
// Any other error of a write is that write's, the others going on; an
// error of the transaction itself is returned.
func (c *committer) attempt(ctx, wait context.Context, batch []*writeCall) (err error) {
	tx := c.d.wtx
	if err := c.begin(wait, tx); err != nil {
		return err
	}
	c.lock = c.locks.Add(1)
	// After the rollback, if any (deferred functions run last first).
	defer c.unlocks.Add(1)
	known := c.changesKnown
	c.changesKnown = false
	defer func() {
		if err != nil {
			c.rollback(tx)
		}
	}()
	before := c.changes
	if !known {
		if before, err = c.totalChanges(ctx, tx); err != nil {
			return err
		}
	}
	one := len(batch) == 1
	for _, w := range batch {
		w.Err = nil
		if err := w.CallerErr(); err != nil {
			w.Err = err
			continue
		}
		if one {
			if werr := w.Req.run(ctx, tx); werr != nil {
				if isBusy(werr) || isFatal(werr) {
					return werr
				}
				w.Err = werr
				return errNothingCommitted
			}
			break
		}
		if w.Req.single {
			if werr := w.Req.run(ctx, tx); werr != nil {
				if isBusy(werr) || isFatal(werr) {
					return werr
				}
				w.Err = werr
			}
			continue
		}
		if err := c.exec(ctx, tx, sqlSavepoint); err != nil {
			return err
		}
		if werr := w.Req.run(ctx, tx); werr != nil {
			if isBusy(werr) || isFatal(werr) {
				return werr
			}
			w.Err = werr
			if err := c.exec(ctx, tx, sqlRollbackTo); err != nil {
				return err
			}
		}
		if err := c.exec(ctx, tx, sqlReleaseSavepoint); err != nil {
			return err
		}
	}
	after, err := c.totalChanges(ctx, tx)
	if err != nil {
		return err
	}
	c.wrote = after != before
	if err := c.exec(ctx, tx, sqlCommit); err != nil {
		return err
	}
	// A commit or a rollback leaves total_changes() as it is.
	c.changes, c.changesKnown = after, true
	return nil
}

// begin runs BEGIN IMMEDIATE, which takes the file's write lock, under
// wait. While another connection holds the lock (another process's write),
// it tries again after lockRetryAfter, for up to the busy timeout: the
// writer connection runs with no busy timeout of SQLite's (see
// db.open), whose waits, a millisecond, then two, then five, and longer
// (the default busy handler's), would leave the file unwritten for
// milliseconds after the other process's commit, which takes a sync, a
// fraction of one on a fast disk.
func (c *committer) begin(wait context.Context, tx *wtx) error {
	var deadline time.Time
	for n := 0; ; n++ {
		err := c.exec(wait, tx, sqlBegin)
		if err == nil || !isBusy(err) {
			return err
		}
		if hook := c.d.cfg.hooks.lockBusy; hook != nil {
			hook()
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(c.d.cfg.busy)
		} else if time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(lockRetryAfter(n))
		select {
		case <-wait.Done():
			t.Stop()
			return wait.Err()
		case <-t.C:
		}
	}
}

// lockRetryAfter is how long the committer waits before its n-th attempt
// (from 0) to take the write lock again while another connection holds it:
// 100µs, doubling to at most half a millisecond, so that a write that
// waits for another process's commit goes on within a fraction of a
// millisecond of it, and one that waits long costs a failed attempt, a few
// microseconds, every half millisecond.
func lockRetryAfter(n int) time.Duration {
	return min(lockRetryFirst<<min(n, 10), lockRetryMax)
}

// The bounds of lockRetryAfter.
const (
	lockRetryFirst = 100 * time.Microsecond
	lockRetryMax   = 500 * time.Microsecond
)

// totalChanges is the number of rows the write connection has inserted,
// updated or deleted since it opened.
func (c *committer) totalChanges(ctx context.Context, tx *wtx) (n int64, err error) {
	st, err := tx.stmt(ctx, sqlTotalChanges)
	if err != nil {
		return 0, err
	}
	err = st.QueryRowContext(ctx).Scan(&n)
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

// rollback ends the transaction on the writer connection, if one is open:
// SQLite may have rolled it back itself (an interrupt, a full file, an I/O
// error), and then ROLLBACK fails with nothing to undo. It runs under a
// context of its own: the store's may have ended (Close), and the
// transaction must still end before the connection closes.
func (c *committer) rollback(tx *wtx) {
	_ = c.exec(context.Background(), tx, sqlRollback)
}

// exec runs one of the prepared statements in tx.
func (c *committer) exec(ctx context.Context, tx *wtx, query string) error {
	st, err := tx.stmt(ctx, query)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx)
	return err
}
