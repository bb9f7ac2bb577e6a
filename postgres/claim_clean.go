package postgres

import (
	"context"

	"github.com/leasehold/lease/claim/claimstore"
)

var _ claimstore.Cleaner = (*ClaimStore)(nil)

// Clean deletes up to limit finished rows whose retention
// ([WithRetention]) has passed on the database's clock, completed
// first, then cancelled, then dead letters (when a Dead retention is set),
// each oldest first, and returns how many it deleted. It is one statement,
// which first tries a transaction-scoped advisory lock of the table: while
// one process cleans, a Clean from any other returns 0 at once, so
// cleaners never contend for rows. Call it in a loop (claim.Broker's
// RunCleaner does) until it returns less than limit.
func (s *ClaimStore) Clean(ctx context.Context, limit int) (int, error) {
	const op = "clean"
	if err := s.begin(ctx, op); err != nil {
		return 0, err
	}
	if err := checks.Limit("claims."+op, limit); err != nil {
		return 0, err
	}
	r := s.cfg.retention
	tag, err := s.pool.Exec(ctx, s.sql.clean, micros(r.Completed), micros(r.Cancelled), micros(r.Dead), limit, s.table)
	if err != nil {
		return 0, s.fail(op, err)
	}
	return int(tag.RowsAffected()), nil
}
