package claim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// List pages through items whose heaps hold them out of ID order (delays
// decreasing with the ID, priorities mixed) and returns each page in ID
// order, every item once.
func TestListPagesOutOfOrderItems(t *testing.T) {
	b, _, _ := newBroker(t)
	var want []claim.ItemID
	for i := range 40 {
		opts := []claim.EnqueueOption{claim.Priority(i % 3)}
		if i%2 == 0 {
			opts = append(opts, claim.Delay(time.Duration(100-i)*time.Second))
		}
		want = append(want, enqueue(t, b, q, "x", opts...).ID)
	}
	for _, limit := range []int{1, 3, 7, 40, 100} {
		var got []claim.ItemID
		var after claim.ItemID
		for {
			page, err := b.List(ctx, claim.Query{Queue: q, After: after, Limit: limit})
			require.NoError(t, err)
			require.LessOrEqual(t, len(page), limit)
			if len(page) == 0 {
				break
			}
			for _, it := range page {
				got = append(got, it.ID)
			}
			after = page[len(page)-1].ID
		}
		assert.Equal(t, want, got, "limit %d", limit)
	}
}
