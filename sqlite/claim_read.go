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
	return s.eng.Lookup(ctx, id)
}

// Lookup is one statement on a reader connection (see readNow).
func (d dialect) Lookup(ctx context.Context, id claim.ItemID) (claim.Item, bool, error) {
	var (
		r   itemRow
		now int64
	)
	err := d.d.readNow(ctx, func(tx *sql.Tx, at int64) error {
		now = at
		return tx.QueryRowContext(ctx, sqlLookup, sql.Named("id", int64(id)), sql.Named("now", now)).Scan(r.dest()...)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return claim.Item{}, false, nil
	}
	if err != nil {
		return claim.Item{}, false, err
	}
	it, err := r.item(now)
	return it, true, err
}

// List returns the items of q.Queue in q.State (every state when zero),
// of q.Kind (every kind when "") and with q.Tag (any when ""), with IDs
// above q.After, in ID order, at most q.Limit of them, as of now
// on the store's clock.
func (s *ClaimStore) List(ctx context.Context, q claim.Query) ([]claim.Item, error) {
	return s.eng.List(ctx, q)
}

// List is one statement on a reader connection (see readNow).
func (d dialect) List(ctx context.Context, q claim.Query) ([]claim.Item, error) {
	after := int64(min(uint64(q.After), math.MaxInt64))
	var out []claim.Item
	err := d.d.readNow(ctx, func(tx *sql.Tx, now int64) error {
		out = []claim.Item{}
		rows, err := tx.QueryContext(ctx, sqlList, sql.Named("queue", q.Queue), sql.Named("state", int(q.State)),
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
	return out, err
}

// Counts returns the numbers of items of queue in each state as of now on
// the store's clock. An unknown queue has zero counts. It reads the
// queue's live rows, and counts its finished and dead ones in an index
// without reading them: about a page per few hundred of those.
func (s *ClaimStore) Counts(ctx context.Context, queue string) (claim.Counts, error) {
	return s.eng.Counts(ctx, queue)
}

// Counts is one statement on a reader connection (see readNow).
func (d dialect) Counts(ctx context.Context, queue string) (claim.Counts, error) {
	var c claim.Counts
	err := d.d.readNow(ctx, func(tx *sql.Tx, now int64) error {
		return tx.QueryRowContext(ctx, sqlCounts, sql.Named("queue", queue), sql.Named("now", now)).
			Scan(&c.Visible, &c.Delayed, &c.Claimed, &c.Dead, &c.Completed, &c.Cancelled)
	})
	return c, err
}
