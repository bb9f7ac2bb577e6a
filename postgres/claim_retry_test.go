package postgres

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// RetryNow makes a delayed item claimable at once, keeps a visible one in
// its place, and refuses the items that are not waiting, changing nothing.
func TestClaimStoreRetryNow(t *testing.T) {
	s := newTestClaimStore(t)
	delayed := item("q", "later")
	delayed.Delay = time.Hour
	items := enqueue(t, s, item("q", "now"), delayed, item("q", "held"))
	require.Empty(t, claimN(t, s, "other", "w", 1))

	got, err := s.RetryNow(ctx, "q", items[1].ID)
	require.NoError(t, err)
	assert.Equal(t, claim.Visible, got.State)
	assert.Equal(t, 0, got.Attempts)

	visible, err := s.RetryNow(ctx, "q", items[0].ID)
	require.NoError(t, err)
	assert.Equal(t, items[0].VisibleAt, visible.VisibleAt, "a visible item keeps its place")

	cs := claimN(t, s, "q", "w", 3)
	require.Len(t, cs, 3, "the delayed item is claimable now")

	for name, id := range map[string]claim.ItemID{"claimed": items[2].ID, "unknown": 1 << 40} {
		t.Run(name, func(t *testing.T) {
			_, err := s.RetryNow(ctx, "q", id)
			require.ErrorIs(t, err, claim.ErrNotFound)
			require.ErrorIs(t, err, lease.ErrNotFound)
		})
	}
	_, err = s.RetryNow(ctx, "other", items[0].ID)
	require.ErrorIs(t, err, claim.ErrNotFound, "another queue's item")
	_, err = s.RetryNow(ctx, "", items[0].ID)
	require.ErrorIs(t, err, lease.ErrInvalidArgument)

	b := lease.Must(claim.New(s))
	assert.True(t, b.Capabilities().RetryNow)
}
