package postgres

import "context"

// Clean deletes up to limit finished rows whose retention
// ([WithRetention]) has passed on the database's clock, completed
// first, then cancelled, then dead letters (when a Dead retention is set),
// each oldest first, and returns how many it deleted. It is one statement,
// which first tries a transaction-scoped advisory lock of the table: while
// one process cleans, a Clean from any other returns 0 at once, so
// cleaners never contend for rows. Call it in a loop (claim.Broker's
// RunCleaner does) until it returns less than limit.
func (s *ClaimStore) Clean(ctx context.Context, limit int) (int, error) {
	return s.eng.Clean(ctx, limit)
}

// Clean is one statement.
func (d dialect) Clean(ctx context.Context, limit int) (int, error) {
	r := d.cfg.retention
	tag, err := d.pool.Exec(ctx, d.sql.clean, micros(r.Completed), micros(r.Cancelled), micros(r.Dead), limit, d.table)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}
