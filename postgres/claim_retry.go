package postgres

import (
	"context"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
)

var _ claimstore.Retrier = (*ClaimStore)(nil)

// RetryNow makes the delayed item id of queue visible now, keeping its
// attempts and history, and wakes the queue's waiters in every process; a
// visible item is returned as it is. An item of queue in any other state
// (claimed, dead, finished), or of no such queue, gets an error matching
// claim.ErrNotFound and nothing changes.
func (s *ClaimStore) RetryNow(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	const op = "retry_now"
	if err := s.begin(ctx, op); err != nil {
		return claim.Item{}, err
	}
	if err := checks.Item("claims."+op, queue, id); err != nil {
		return claim.Item{}, err
	}
	return s.oneItem(ctx, op, queue, id, s.sql.retryNow, queue, int64(id))
}
