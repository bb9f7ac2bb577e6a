package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/leasehold/lease/claim"
)

var _ claim.Retrier = (*ClaimStore)(nil)

// sqlRetryNow makes a waiting item (visible, or delayed by its enqueue's
// Delay or a retry's backoff) visible now; a visible one keeps its place.
var sqlRetryNow = claimSQL.Replace(`UPDATE lease_claims SET due = min(due, :now)
WHERE id = :id AND queue = :queue AND state = 1
RETURNING {COLS}`)

// RetryNow makes the delayed item id of queue visible now, keeping its
// attempts and history, and wakes the store's waiters (those of other
// processes within the poll); a visible item is returned as it is. An item
// of queue in any other state (claimed, dead, finished), or of no such
// queue, gets an error matching claim.ErrNotFound and nothing changes.
func (s *ClaimStore) RetryNow(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	const op = "retry_now"
	if err := s.begin(ctx, op); err != nil {
		return claim.Item{}, err
	}
	if err := checks.Item("claims."+op, queue, id); err != nil {
		return claim.Item{}, err
	}
	var it claim.Item
	var found bool
	err := s.write(ctx, op, true, func(ctx context.Context, tx *sql.Tx, now int64) error {
		found = false
		var r itemRow
		err := tx.QueryRowContext(ctx, sqlRetryNow, sql.Named("id", int64(id)), sql.Named("queue", queue),
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
	if err != nil {
		return claim.Item{}, err
	}
	if !found {
		return claim.Item{}, &claim.NotFoundError{Op: op, Queue: queue, Item: id}
	}
	return it, nil
}
