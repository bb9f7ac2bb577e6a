package sqlite

import (
	"context"

	"github.com/leasehold/lease/claim"
)

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
	return s.eng.RetryNow(ctx, queue, id)
}
