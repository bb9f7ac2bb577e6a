package sqlite

import (
	"context"
	"database/sql"
)

// Clean deletes up to limit finished items whose retention
// ([WithRetention]) has passed on the store's clock, completed first, then
// cancelled, then dead letters (when a Dead retention is set), each oldest
// first, and returns how many it deleted. It is one statement in a write
// transaction, which holds the file's write lock: cleaners in several
// processes take turns, each deleting rows the one before left, and never
// contend for the same rows. Call it in a loop (claim.Broker's RunCleaner
// does) until it returns less than limit.
func (s *ClaimStore) Clean(ctx context.Context, limit int) (int, error) {
	return s.eng.Clean(ctx, limit)
}

// Clean is one statement in the shared write transaction.
func (d dialect) Clean(ctx context.Context, limit int) (int, error) {
	r := d.d.cfg.retention
	var n int64
	err := d.write(ctx, "clean", true, func(ctx context.Context, tx *wtx, now int64) error {
		res, err := tx.ExecContext(ctx, sqlClean, sql.Named("now", now), sql.Named("done", int64(r.Completed)),
			sql.Named("gone", int64(r.Cancelled)), sql.Named("dead", int64(r.Dead)), sql.Named("limit", limit))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	}, nil)
	return int(n), err
}
