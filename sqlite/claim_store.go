package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
	"github.com/leasehold/lease/internal/sqlclaim"
)

// ClaimStore is a [claim.Store] that keeps items and claims in an SQLite
// file: a durable work queue that needs nothing but the file, shared by
// every process of the host that opens it. It is safe for concurrent use by
// multiple goroutines, and by several processes opening the same file.
//
// An item is one row. Every write (Enqueue, Claim, Extend, Settle, Cancel,
// RequeueDead, DeleteDead, RetryNow, Clean, Pause, Resume) runs in a write
// transaction begun with BEGIN IMMEDIATE on the store's one writer
// connection, and the writes of many goroutines share one transaction
// (group commit): a call returns once the transaction holding it
// committed. Another process's write transaction makes this one wait (the
// busy timeout) and try again; a busy file never reaches the caller. A
// call whose ctx ends while it waits returns ctx.Err() at once and leaves
// the other calls of its transaction untouched: its write is withdrawn if
// no transaction had taken it yet, and otherwise may be in the file,
// whole. A call that finds no other write under way or waiting commits on
// its own goroutine: its ctx then ends only the wait for another
// process's write lock (ctx.Err(), nothing written), and once its
// transaction began the call waits for the commit and reports it. Reads
// (Lookup, List, Counts, Queues) use a small pool of reader connections
// and never wait for writes.
//
// Deadlines are instants of the store's clock ([WithClock]; the host's wall
// clock by default), which every process of the host shares. Each claim
// increments the item's token, which is never reset, and Extend and Settle
// act only if the item is still claimed with that token and its lease has
// not ended: a clock step can make a lease end early or late, never give
// two claims the same token.
type ClaimStore struct {
	d   *db
	eng *sqlclaim.Engine
}

// dialect is the store as the claim engine runs it: each step of a flow
// as SQLite statements, writes in the shared write transaction.
type dialect struct{ *ClaimStore }

var _ sqlclaim.Store = (*ClaimStore)(nil)

// NewClaimStore opens the SQLite file at path as a claim store, creating
// the file if it does not exist and bringing its schema up to date (safe
// when several processes open a file at once). It returns an error matching
// lease.ErrInvalidArgument for bad options, and a storage error (a
// *lease.Error matching lease.ErrStorage, and [ErrReadOnly], [ErrFull],
// [ErrCorrupt], [ErrNotDatabase] or [ErrCannotOpen] when SQLite says which)
// when the file cannot be used. Close releases the file.
func NewClaimStore(ctx context.Context, path string, opts ...Option) (*ClaimStore, error) {
	d, err := openDB(ctx, "claims.open", path, opts)
	if err != nil {
		return nil, err
	}
	s := &ClaimStore{d: d}
	s.eng = sqlclaim.New(dialect{s}, sqlclaim.Config{Checks: checks, Closed: &d.closed, Now: d.clock.Now})
	d.watch.mu.Lock()
	d.watch.dueSQL = sqlNextDue
	d.watch.mu.Unlock()
	return s, nil
}

// write runs fn in the next group commit, on behalf of op; single says
// that fn changes the file with one statement at most (see committer.do).
// fn is given the batch's context, not the caller's, and must run every
// statement under it.
func (s *ClaimStore) write(ctx context.Context, op string, single bool, fn func(ctx context.Context, tx *wtx, now int64) error, after func()) error {
	err := s.d.commit.do(ctx, "claims."+op, single, func(ctx context.Context, tx *wtx) error {
		return fn(ctx, tx, s.d.now())
	}, after)
	if err != nil {
		return s.fail(op, err)
	}
	return nil
}

// Enqueue adds items in one transaction and returns them, in order, with
// IDs in that order. An item whose Key exists in its queue (or earlier in
// items) is not added: the existing item is returned in its place, unless
// the item's KeyStates leave out the existing item's state, which then
// gives its key up (see claim.Store).
func (s *ClaimStore) Enqueue(ctx context.Context, items []claim.NewItem) ([]claim.Item, error) {
	return s.eng.Enqueue(ctx, items)
}

// Enqueue inserts items one by one in the shared write transaction.
func (d dialect) Enqueue(ctx context.Context, items []claim.NewItem, out []claim.Item) error {
	s := d.ClaimStore
	var soonest int64
	return s.write(ctx, "enqueue", len(items) == 1, func(ctx context.Context, tx *wtx, now int64) error {
		soonest = 0
		ins, err := tx.stmt(ctx, sqlInsert)
		if err != nil {
			return err
		}
		judged := map[[2]string]bool{} // keys an earlier item of the call had
		for i, it := range items {
			due := addNanos(now, it.Delay)
			var key any
			if it.Key != "" {
				key = it.Key
			}
			again := judged[[2]string{it.Queue, it.Key}]
			if it.Key != "" {
				judged[[2]string{it.Queue, it.Key}] = true
			}
			insert := func() (id int64, err error) {
				err = ins.QueryRowContext(ctx, sql.Named("queue", it.Queue), sql.Named("kind", it.Kind),
					sql.Named("key", key), sql.Named("payload", payloadArg(it.Payload)),
					sql.Named("tags", claimstore.TagsJSON(it.Tags)), sql.Named("metadata", payloadArg(it.Metadata)),
					sql.Named("max", it.MaxAttempts),
					sql.Named("prio", it.Priority), sql.Named("timeout", int64(it.Timeout)),
					sql.Named("now", now), sql.Named("due", due)).Scan(&id)
				return id, err
			}
			id, err := insert()
			if errors.Is(err, sql.ErrNoRows) {
				// The key is held: by an item stored before, or earlier
				// in this transaction.
				var r itemRow
				if err := tx.QueryRowContext(ctx, sqlByKey, sql.Named("queue", it.Queue),
					sql.Named("key", it.Key)).Scan(r.dest()...); err != nil {
					return err
				}
				if out[i], err = r.item(now); err != nil {
					return err
				}
				if again || len(it.KeyStates) == 0 || slices.Contains(it.KeyStates, out[i].State) {
					out[i].Duplicate = true
					continue
				}
				// Its state does not block the item: it gives its key up.
				if _, err := tx.ExecContext(ctx, sqlReleaseKey, sql.Named("id", r.id)); err != nil {
					return err
				}
				id, err = insert()
			}
			if err != nil {
				return err
			}
			out[i] = claim.Item{
				ID: claim.ItemID(id), Queue: it.Queue, Kind: it.Kind, Tags: slices.Clone(it.Tags),
				Metadata: sqlclaim.ClonePayload(it.Metadata), Key: it.Key, Payload: sqlclaim.ClonePayload(it.Payload),
				State: claim.Visible, MaxAttempts: it.MaxAttempts, Priority: it.Priority,
				Timeout: it.Timeout, EnqueuedAt: at(now), VisibleAt: at(due),
			}
			if due > now {
				out[i].State = claim.Delayed
				if soonest == 0 || due < soonest {
					soonest = due
				}
			}
		}
		return nil
	}, func() { s.d.watch.dueAt(soonest) })
}

// payloadArg keeps an empty payload apart from none.
func payloadArg(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// Claim claims up to req.Limit claimable items of req.Queue, in claim
// order, in one write transaction; none while the queue is paused. An
// expired claim on its last attempt that it comes across goes to the dead
// letters instead.
func (s *ClaimStore) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	return s.eng.Claim(ctx, req)
}

// Claim takes the claimable rows of req.Queue one by one in the shared
// write transaction.
func (d dialect) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	s := d.ClaimStore
	var out []claim.Claim
	var soonest int64
	// A claim of one item takes it with one statement: the expired claims
	// it may bury first stay buried if that statement fails, as the next
	// claim would bury them, so it needs no savepoint of its own.
	err := s.write(ctx, "claim", req.Limit == 1, func(ctx context.Context, tx *wtx, now int64) error {
		out = make([]claim.Claim, 0, min(req.Limit, 64))
		due := addNanos(now, req.Lease)
		soonest = 0
		take, err := tx.stmt(ctx, sqlTake)
		if err != nil {
			return err
		}
		if req.Limit == 1 {
			// The one item in one statement, unless it is an expired
			// claim to bury, or there is none.
			row, ok, err := takeNext(ctx, tx, req, now, due)
			if err != nil {
				return err
			}
			if ok {
				cl, err := row.Claim()
				if err != nil {
					return err
				}
				out, soonest = append(out, cl), due
				return nil
			}
		}
		claimable, err := tx.stmt(ctx, sqlClaimable)
		if err != nil {
			return err
		}
		for len(out) < req.Limit {
			rows, err := claimable.QueryContext(ctx, sql.Named("queue", req.Queue),
				sql.Named("now", now), sql.Named("limit", req.Limit-len(out)))
			if err != nil {
				return err
			}
			type cand struct {
				id             int64
				state          int
				attempts, maxA int
			}
			var cands []cand
			for rows.Next() {
				var c cand
				if err := rows.Scan(&c.id, &c.state, &c.attempts, &c.maxA); err != nil {
					_ = rows.Close()
					return err
				}
				cands = append(cands, c)
			}
			if err := rows.Close(); err != nil {
				return err
			}
			if len(cands) == 0 {
				break
			}
			for _, c := range cands {
				if c.state == sqlclaim.RowClaimed && c.attempts >= c.maxA {
					if _, err := tx.ExecContext(ctx, sqlBury, sql.Named("id", c.id)); err != nil {
						return err
					}
					continue
				}
				// database/sql gives the row its own payload and metadata.
				row := sqlclaim.ClaimedRow{ID: c.id, Queue: req.Queue, Owner: req.Owner, Expires: at(due)}
				var timeout, enqueued int64
				if err := take.QueryRowContext(ctx, sql.Named("owner", req.Owner), sql.Named("due", due),
					sql.Named("id", c.id)).Scan(&row.Attempt, &row.MaxAttempts, &row.Priority, &timeout,
					&enqueued, &row.Token, &row.Payload, &row.Kind, &row.Tags, &row.Metadata); err != nil {
					return err
				}
				row.Timeout, row.Enqueued = time.Duration(timeout), at(enqueued)
				cl, err := row.Claim()
				if err != nil {
					return err
				}
				out = append(out, cl)
			}
		}
		if len(out) > 0 {
			soonest = due
		}
		return nil
	}, func() { s.d.watch.dueAt(soonest) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// takeNext claims the next claimable item of req.Queue with sqlTakeNext, if
// it is not an expired claim to bury: ok is false when there is no item to
// take or the next one is to be buried.
func takeNext(ctx context.Context, tx *wtx, req claim.ClaimRequest, now, due int64) (row sqlclaim.ClaimedRow, ok bool, err error) {
	st, err := tx.stmt(ctx, sqlTakeNext)
	if err != nil {
		return row, false, err
	}
	row = sqlclaim.ClaimedRow{Queue: req.Queue, Owner: req.Owner, Expires: at(due)}
	var timeout, enqueued int64
	err = st.QueryRowContext(ctx, sql.Named("owner", req.Owner), sql.Named("due", due), sql.Named("queue", req.Queue),
		sql.Named("now", now)).Scan(&row.ID, &row.Attempt, &row.MaxAttempts, &row.Priority, &timeout, &enqueued,
		&row.Token, &row.Payload, &row.Kind, &row.Tags, &row.Metadata)
	if errors.Is(err, sql.ErrNoRows) {
		return row, false, nil
	}
	if err != nil {
		return row, false, err
	}
	row.Timeout, row.Enqueued = time.Duration(timeout), at(enqueued)
	return row, true, nil
}

// Extend extends the live claim r to lease from now on the store's clock.
func (s *ClaimStore) Extend(ctx context.Context, r claim.Ref, lease time.Duration) (time.Time, error) {
	return s.eng.Extend(ctx, r, lease)
}

// Extend is one statement in the shared write transaction.
func (d dialect) Extend(ctx context.Context, r claim.Ref, lease time.Duration) (time.Time, error) {
	s := d.ClaimStore
	var expires int64
	err := s.write(ctx, "extend", true, func(ctx context.Context, tx *wtx, now int64) error {
		expires = 0
		st, err := tx.stmt(ctx, sqlExtend)
		if err != nil {
			return err
		}
		err = st.QueryRowContext(ctx, sql.Named("due", addNanos(now, lease)), sql.Named("id", int64(r.Item)),
			sql.Named("token", int64(r.Token)), sql.Named("now", now)).Scan(&expires)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	}, func() { s.d.watch.dueAt(expires) })
	if err != nil || expires == 0 {
		return time.Time{}, err
	}
	return at(expires), nil
}

// Settle ends the live claim st.Ref as st says, in one write transaction
// shared with other calls; it returns once that transaction committed. A
// completed item is deleted, or kept as Completed when the store keeps
// completed items ([WithRetention]).
func (s *ClaimStore) Settle(ctx context.Context, st claim.Settlement) error {
	return s.eng.Settle(ctx, st)
}

// Settle is one statement in the shared write transaction.
func (d dialect) Settle(ctx context.Context, st claim.Settlement) (bool, error) {
	s := d.ClaimStore
	var settled bool
	var due int64
	err := s.write(ctx, "settle", true, func(ctx context.Context, tx *wtx, now int64) error {
		settled, due = false, 0
		id, token := sql.Named("id", int64(st.Ref.Item)), sql.Named("token", int64(st.Ref.Token))
		var res sql.Result
		if st.How == claim.SettleComplete {
			q := sqlComplete
			if s.d.cfg.retention.Completed > 0 {
				q = sqlCompleteKeep
			}
			stmt, err := tx.stmt(ctx, q)
			if err != nil {
				return err
			}
			if res, err = stmt.ExecContext(ctx, id, token, sql.Named("now", now)); err != nil {
				return err
			}
		} else {
			stmt, err := tx.stmt(ctx, sqlMove)
			if err != nil {
				return err
			}
			due = addNanos(now, st.After)
			if res, err = stmt.ExecContext(ctx, id, token, sql.Named("now", now), sql.Named("how", int(st.How)),
				sql.Named("reason", st.Reason), sql.Named("due", due)); err != nil {
				return err
			}
		}
		n, err := res.RowsAffected()
		settled = n == 1
		return err
	}, func() {
		if st.How == claim.SettleRetry || st.How == claim.SettleSnooze {
			s.d.watch.dueAt(due)
		}
	})
	return settled, err
}

// Cancel cancels the item id of queue whatever its state: it is deleted,
// or kept as Cancelled when the store keeps cancelled items
// ([WithRetention]). If it was claimed, its claim ends: later calls on it
// are stale, and, if this store made the claim, the claim's Lost function
// is called with a cause matching claim.ErrCancelled and
// lease.ErrStaleUse. A claim made by another process learns of it on its
// next call. An item already completed or cancelled is left as it is. An
// item that is not in queue gets an error matching claim.ErrNotFound.
func (s *ClaimStore) Cancel(ctx context.Context, queue string, id claim.ItemID) error {
	return s.eng.Cancel(ctx, queue, id)
}

// Cancel reads the item and deletes it, or keeps it as cancelled, in the
// shared write transaction.
func (d dialect) Cancel(ctx context.Context, queue string, id claim.ItemID) (sqlclaim.Cancelled, error) {
	s := d.ClaimStore
	var found, live bool
	var token int64
	err := s.write(ctx, "cancel", true, func(ctx context.Context, tx *wtx, now int64) error {
		found, live = false, false
		var state int
		err := tx.QueryRowContext(ctx, sqlCancelFind, sql.Named("id", int64(id)), sql.Named("queue", queue),
			sql.Named("now", now)).Scan(&token, &state, &live)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		if state == sqlclaim.RowCompleted || state == sqlclaim.RowCancelled {
			return nil
		}
		if s.d.cfg.retention.Cancelled > 0 {
			_, err = tx.ExecContext(ctx, sqlCancelKeep, sql.Named("id", int64(id)), sql.Named("now", now))
		} else {
			_, err = tx.ExecContext(ctx, sqlCancel, sql.Named("id", int64(id)))
		}
		return err
	}, nil)
	return sqlclaim.Cancelled{Found: found, Live: live, Token: uint64(token)}, err
}

// RequeueDead makes the dead item id of queue visible at once with no
// attempts used, keeping its history. An item that is not a dead letter of
// queue gets an error matching claim.ErrNotFound.
func (s *ClaimStore) RequeueDead(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	return s.eng.RequeueDead(ctx, queue, id)
}

// Change is one statement returning the item's row, in the shared write
// transaction.
func (d dialect) Change(ctx context.Context, ch sqlclaim.Change, queue string, id claim.ItemID) (claim.Item, bool, error) {
	op, query := "requeue_dead", sqlRequeueDead
	if ch == sqlclaim.RetryNow {
		op, query = "retry_now", sqlRetryNow
	}
	s := d.ClaimStore
	var it claim.Item
	var found bool
	err := s.write(ctx, op, true, func(ctx context.Context, tx *wtx, now int64) error {
		found = false
		var r itemRow
		err := tx.QueryRowContext(ctx, query, sql.Named("id", int64(id)), sql.Named("queue", queue),
			sql.Named("now", now)).Scan(r.dest()...)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		it, err = r.item(now)
		return err
	}, nil)
	return it, found, err
}

// DeleteDead deletes the dead item id of queue, freeing its key. An item
// that is not a dead letter of queue gets an error matching
// claim.ErrNotFound.
func (s *ClaimStore) DeleteDead(ctx context.Context, queue string, id claim.ItemID) error {
	return s.eng.DeleteDead(ctx, queue, id)
}

// DeleteDead is one statement in the shared write transaction.
func (d dialect) DeleteDead(ctx context.Context, queue string, id claim.ItemID) (bool, error) {
	var n int64
	err := d.write(ctx, "delete_dead", true, func(ctx context.Context, tx *wtx, now int64) error {
		res, err := tx.ExecContext(ctx, sqlDeleteDead, sql.Named("id", int64(id)), sql.Named("queue", queue),
			sql.Named("now", now))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	}, nil)
	return n > 0, err
}

// Notify returns a channel that is closed once an item of queue may have
// become claimable: at the next commit through this store, at the next
// commit of another process (on Linux a moment after it is synced, the
// store being told of writes to the file; elsewhere, or failing that, at
// the next poll, [WithPoll]), when an item or a claim known to the store
// becomes due on its clock, or when the store closes. Every commit wakes
// every waiter, whatever its queue: the file does not say what changed.
// Call stop when no longer waiting.
func (s *ClaimStore) Notify(queue string) (ready <-chan struct{}, stop func()) {
	return s.d.watch.wait()
}

// Transactions returns how many write transactions the store has committed:
// fewer than its write calls when group commit shares them.
func (s *ClaimStore) Transactions() int64 { return s.d.commit.transactions.Load() }

// Close stops the store's goroutines and closes the file. Calls waiting
// for a batch fail with an error matching lease.ErrClosed, as do later
// calls; Notify channels are closed. No Lost function runs after Close
// returns. Close is idempotent.
func (s *ClaimStore) Close() error {
	s.eng.Close(s.d.close)
	return nil
}

// Tracking needs nothing: a Cancel of another process is not reported.
func (d dialect) Tracking() {}

// Closed is the error of a call on a closed store.
func (d dialect) Closed(op string) error { return closedError("claims." + op) }

// Fail is fail: an SQLite error of op as a storage error.
func (d dialect) Fail(op string, err error) error { return d.fail(op, err) }

// fail wraps a database error of op, or reports the store closed if it
// closed meanwhile.
func (s *ClaimStore) fail(op string, err error) error {
	var le *lease.Error
	if errors.As(err, &le) && !errors.Is(err, lease.ErrStorage) {
		return err
	}
	if s.d.closed.Load() {
		return closedError("claims." + op)
	}
	return s.d.storage("claims."+op, err)
}
