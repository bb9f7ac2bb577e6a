package postgres

import (
	"context"
	"errors"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/lease/claim"
)

// Lookup returns the item id as of now on the database's clock.
func (s *ClaimStore) Lookup(ctx context.Context, id claim.ItemID) (claim.Item, error) {
	const op = "lookup"
	if err := s.begin(ctx, op); err != nil {
		return claim.Item{}, err
	}
	if err := checks.ID("claims."+op, id); err != nil {
		return claim.Item{}, err
	}
	return s.oneItem(ctx, op, "", id, s.sql.lookup, int64(id))
}

// oneItem runs a statement returning one item's row and returns the item,
// or a *claim.NotFoundError for op, queue and id if there is none.
func (s *ClaimStore) oneItem(ctx context.Context, op, queue string, id claim.ItemID, sql string, args ...any) (claim.Item, error) {
	var r itemRow
	err := s.pool.QueryRow(ctx, sql, args...).Scan(r.dest()...)
	if errors.Is(err, pgx.ErrNoRows) {
		return claim.Item{}, &claim.NotFoundError{Op: op, Queue: queue, Item: id}
	}
	if err != nil {
		return claim.Item{}, s.fail(op, err)
	}
	it, err := r.item()
	if err != nil {
		return claim.Item{}, s.fail(op, err)
	}
	return it, nil
}

// List returns the items of q.Queue in q.State (every state when zero)
// with IDs above q.After, in ID order, at most q.Limit of them, as of now
// on the database's clock.
func (s *ClaimStore) List(ctx context.Context, q claim.Query) ([]claim.Item, error) {
	const op = "list"
	if err := s.begin(ctx, op); err != nil {
		return nil, err
	}
	if err := checks.Query("claims."+op, q); err != nil {
		return nil, err
	}
	after := int64(min(uint64(q.After), math.MaxInt64))
	rows, err := s.pool.Query(ctx, s.sql.list, q.Queue, int32(q.State), after, q.Limit, q.Kind, q.Tag)
	if err != nil {
		return nil, s.fail(op, err)
	}
	out := []claim.Item{}
	var r itemRow
	_, err = pgx.ForEachRow(rows, r.dest(), func() error {
		it, err := r.item()
		out = append(out, it)
		return err
	})
	if err != nil {
		return nil, s.fail(op, err)
	}
	return out, nil
}

// Counts returns the numbers of items of queue in each state as of now on
// the database's clock. An unknown queue has zero counts.
func (s *ClaimStore) Counts(ctx context.Context, queue string) (claim.Counts, error) {
	const op = "counts"
	if err := s.begin(ctx, op); err != nil {
		return claim.Counts{}, err
	}
	if err := checks.Name("claims."+op, "queue", queue); err != nil {
		return claim.Counts{}, err
	}
	var v, d, c, x, done, gone int64
	if err := s.pool.QueryRow(ctx, s.sql.counts, queue).Scan(&v, &d, &c, &x, &done, &gone); err != nil {
		return claim.Counts{}, s.fail(op, err)
	}
	return claim.Counts{Visible: int(v), Delayed: int(d), Claimed: int(c), Dead: int(x),
		Completed: int(done), Cancelled: int(gone)}, nil
}

// RequeueDead makes the dead item id of queue visible at once with no
// attempts used, keeping its history, and wakes the queue's waiters. An
// item that is not a dead letter of queue gets an error matching
// claim.ErrNotFound.
func (s *ClaimStore) RequeueDead(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	const op = "requeue_dead"
	if err := s.begin(ctx, op); err != nil {
		return claim.Item{}, err
	}
	if err := checks.Item("claims."+op, queue, id); err != nil {
		return claim.Item{}, err
	}
	return s.oneItem(ctx, op, queue, id, s.sql.requeueDead, queue, int64(id))
}

// DeleteDead deletes the dead item id of queue, freeing its key. An item
// that is not a dead letter of queue gets an error matching
// claim.ErrNotFound.
func (s *ClaimStore) DeleteDead(ctx context.Context, queue string, id claim.ItemID) error {
	const op = "delete_dead"
	if err := s.begin(ctx, op); err != nil {
		return err
	}
	if err := checks.Item("claims."+op, queue, id); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, s.sql.deleteDead, queue, int64(id))
	if err != nil {
		return s.fail(op, err)
	}
	if tag.RowsAffected() == 0 {
		return &claim.NotFoundError{Op: op, Queue: queue, Item: id}
	}
	return nil
}
