package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"

	"github.com/leasehold/lease/claim"
)

// Lookup returns the item id as of now on the store's clock.
func (s *ClaimStore) Lookup(ctx context.Context, id claim.ItemID) (claim.Item, error) {
	const op = "lookup"
	if err := s.begin(ctx, op); err != nil {
		return claim.Item{}, err
	}
	if err := checks.ID("claims."+op, id); err != nil {
		return claim.Item{}, err
	}
	now := s.d.now()
	var r itemRow
	err := s.d.reading(ctx, func() error {
		return s.d.read.QueryRowContext(ctx, sqlLookup, sql.Named("id", int64(id)), sql.Named("now", now)).Scan(r.dest()...)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return claim.Item{}, &claim.NotFoundError{Op: op, Item: id}
	}
	if err != nil {
		return claim.Item{}, s.fail(op, err)
	}
	it, err := r.item(now)
	if err != nil {
		return claim.Item{}, s.fail(op, err)
	}
	return it, nil
}

// List returns the items of q.Queue in q.State (every state when zero),
// of q.Kind (every kind when "") and with q.Tag (any when ""), with IDs
// above q.After, in ID order, at most q.Limit of them, as of now
// on the store's clock.
func (s *ClaimStore) List(ctx context.Context, q claim.Query) ([]claim.Item, error) {
	const op = "list"
	if err := s.begin(ctx, op); err != nil {
		return nil, err
	}
	if err := checks.Query("claims."+op, q); err != nil {
		return nil, err
	}
	now := s.d.now()
	after := int64(min(uint64(q.After), math.MaxInt64))
	var out []claim.Item
	err := s.d.reading(ctx, func() error {
		out = []claim.Item{}
		rows, err := s.d.read.QueryContext(ctx, sqlList, sql.Named("queue", q.Queue), sql.Named("state", int(q.State)),
			sql.Named("after", after), sql.Named("limit", q.Limit), sql.Named("now", now),
			sql.Named("kind", q.Kind), sql.Named("tag", q.Tag))
		if err != nil {
			return err
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var r itemRow
			if err := rows.Scan(r.dest()...); err != nil {
				return err
			}
			it, err := r.item(now)
			if err != nil {
				return err
			}
			out = append(out, it)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.fail(op, err)
	}
	return out, nil
}

// Counts returns the numbers of items of queue in each state as of now on
// the store's clock. An unknown queue has zero counts.
func (s *ClaimStore) Counts(ctx context.Context, queue string) (claim.Counts, error) {
	const op = "counts"
	if err := s.begin(ctx, op); err != nil {
		return claim.Counts{}, err
	}
	if err := checks.Name("claims."+op, "queue", queue); err != nil {
		return claim.Counts{}, err
	}
	var c claim.Counts
	err := s.d.reading(ctx, func() error {
		return s.d.read.QueryRowContext(ctx, sqlCounts, sql.Named("queue", queue), sql.Named("now", s.d.now())).
			Scan(&c.Visible, &c.Delayed, &c.Claimed, &c.Dead, &c.Completed, &c.Cancelled)
	})
	if err != nil {
		return claim.Counts{}, s.fail(op, err)
	}
	return c, nil
}
