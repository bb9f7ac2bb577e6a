package postgres

import (
	"context"
	"errors"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/internal/sqlclaim"
)

// Lookup returns the item id as of now on the database's clock.
func (s *ClaimStore) Lookup(ctx context.Context, id claim.ItemID) (claim.Item, error) {
	return s.eng.Lookup(ctx, id)
}

// Lookup reads the item's row.
func (d dialect) Lookup(ctx context.Context, id claim.ItemID) (claim.Item, bool, error) {
	return d.oneItem(ctx, d.sql.lookup, int64(id))
}

// Change runs the statement of ch, which returns the item's row.
func (d dialect) Change(ctx context.Context, ch sqlclaim.Change, queue string, id claim.ItemID) (claim.Item, bool, error) {
	if ch == sqlclaim.RetryNow {
		return d.oneItem(ctx, d.sql.retryNow, queue, int64(id))
	}
	return d.oneItem(ctx, d.sql.requeueDead, queue, int64(id))
}

// oneItem runs a statement returning one item's row and returns the item,
// with false if there is none.
func (d dialect) oneItem(ctx context.Context, sql string, args ...any) (claim.Item, bool, error) {
	var r itemRow
	err := d.pool.QueryRow(ctx, sql, args...).Scan(r.dest()...)
	if errors.Is(err, pgx.ErrNoRows) {
		return claim.Item{}, false, nil
	}
	if err != nil {
		return claim.Item{}, false, err
	}
	it, err := r.item()
	return it, true, err
}

// List returns the items of q.Queue in q.State (every state when zero)
// with IDs above q.After, in ID order, at most q.Limit of them, as of now
// on the database's clock.
func (s *ClaimStore) List(ctx context.Context, q claim.Query) ([]claim.Item, error) {
	return s.eng.List(ctx, q)
}

// List reads a page of rows.
func (d dialect) List(ctx context.Context, q claim.Query) ([]claim.Item, error) {
	after := int64(min(uint64(q.After), math.MaxInt64))
	rows, err := d.pool.Query(ctx, d.sql.list, q.Queue, int32(q.State), after, q.Limit, q.Kind, q.Tag)
	if err != nil {
		return nil, err
	}
	out := []claim.Item{}
	var r itemRow
	_, err = pgx.ForEachRow(rows, r.dest(), func() error {
		it, err := r.item()
		out = append(out, it)
		return err
	})
	return out, err
}

// Counts returns the numbers of items of queue in each state as of now on
// the database's clock. An unknown queue has zero counts.
func (s *ClaimStore) Counts(ctx context.Context, queue string) (claim.Counts, error) {
	return s.eng.Counts(ctx, queue)
}

// Counts is one statement, planned without JIT compilation (withoutJIT).
func (d dialect) Counts(ctx context.Context, queue string) (claim.Counts, error) {
	var v, x, c, dead, done, gone int64
	err := d.withoutJIT(ctx, d.sql.counts, []any{queue}, func(rows pgx.Rows) error {
		_, err := pgx.ForEachRow(rows, []any{&v, &x, &c, &dead, &done, &gone}, func() error { return nil })
		return err
	})
	if err != nil {
		return claim.Counts{}, err
	}
	return claim.Counts{Visible: int(v), Delayed: int(x), Claimed: int(c), Dead: int(dead),
		Completed: int(done), Cancelled: int(gone)}, nil
}

// RequeueDead makes the dead item id of queue visible at once with no
// attempts used, keeping its history, and wakes the queue's waiters. An
// item that is not a dead letter of queue gets an error matching
// claim.ErrNotFound.
func (s *ClaimStore) RequeueDead(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	return s.eng.RequeueDead(ctx, queue, id)
}

// DeleteDead deletes the dead item id of queue, freeing its key. An item
// that is not a dead letter of queue gets an error matching
// claim.ErrNotFound.
func (s *ClaimStore) DeleteDead(ctx context.Context, queue string, id claim.ItemID) error {
	return s.eng.DeleteDead(ctx, queue, id)
}

// DeleteDead is one statement.
func (d dialect) DeleteDead(ctx context.Context, queue string, id claim.ItemID) (bool, error) {
	tag, err := d.pool.Exec(ctx, d.sql.deleteDead, queue, int64(id))
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() > 0, nil
}

// withoutJIT runs the statement sql of Counts or Queues in a read-only
// transaction that plans it without JIT compilation, and passes its rows
// to scan, which must read them all.
//
// An exact count of a large history reads a million index entries per
// million rows kept, and the planner's estimate of that passes
// jit_above_cost: PostgreSQL then compiled the statement for each call,
// which took longer than the count (Queues beside a million finished
// rows: 490 ms, of which 390 compiling, against 110 ms without; from
// about 100,000 rows for Queues, which counts each queue it lists, and
// from about 2 million for Counts). The transaction and the setting are
// sent with the statement in one batch, one round trip; the setting ends
// with the transaction. A connection that the batch leaves inside the
// transaction (a statement failed) is not idle, and the pool closes it
// rather than reusing it.
func (d dialect) withoutJIT(ctx context.Context, sql string, args []any, scan func(pgx.Rows) error) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN READ ONLY")
	b.Queue("SET LOCAL jit = off")
	b.Queue(sql, args...)
	b.Queue("COMMIT")
	br := d.pool.SendBatch(ctx, b)
	for range 2 {
		if _, err := br.Exec(); err != nil {
			return errors.Join(err, br.Close())
		}
	}
	rows, err := br.Query()
	if err == nil {
		err = scan(rows)
	}
	if err == nil {
		_, err = br.Exec()
	}
	return errors.Join(err, br.Close())
}
