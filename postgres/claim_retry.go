package postgres

import (
	"context"

	"github.com/leasehold/lease/claim"
)

// RetryNow makes the delayed item id of queue visible now, keeping its
// attempts and history, and wakes the queue's waiters in every process; a
// visible item is returned as it is. An item of queue in any other state
// (claimed, dead, finished), or of no such queue, gets an error matching
// claim.ErrNotFound and nothing changes.
func (s *ClaimStore) RetryNow(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	return s.eng.RetryNow(ctx, queue, id)
}
