package sqlite_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/sqlite"
)

// A negative retention is refused, naming the field, and opens nothing.
func TestRetentionRefusesNegative(t *testing.T) {
	t.Parallel()
	_, err := sqlite.NewClaimStore(t.Context(), tempFile(t), sqlite.WithRetention(claim.Retention{Cancelled: -time.Second}))
	require.ErrorIs(t, err, lease.ErrInvalidArgument)
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "retention.cancelled", le.Field)
}

// Two stores on one file, as two processes would, clean at once: each
// deletes rows the other left, none twice, and together they delete every
// finished item once its retention has passed.
func TestCleanersShareAFile(t *testing.T) {
	t.Parallel()
	const items = 60
	clk := leasetest.NewFakeClock(epoch)
	path := tempFile(t)
	keep := sqlite.WithRetention(claim.Retention{Completed: time.Minute})
	a := newClaimStore(t, path, append(testOptions(clk), keep)...)
	b := newClaimStore(t, path, append(testOptions(clk), keep)...)
	ctx := t.Context()
	batch := make([]claim.NewItem, items)
	for i := range batch {
		batch[i] = claim.NewItem{Queue: "q", MaxAttempts: 1}
	}
	_, err := a.Enqueue(ctx, batch)
	require.NoError(t, err)
	claims, err := a.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: items, Lease: time.Hour})
	require.NoError(t, err)
	require.Len(t, claims, items)
	for _, c := range claims {
		require.NoError(t, b.Settle(ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleComplete}))
	}
	counts, err := a.Counts(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, claim.Counts{Completed: items}, counts, "kept by the store that settled them")
	clk.Advance(time.Minute)

	var cleaned atomic.Int64
	var wg sync.WaitGroup
	for _, s := range []*sqlite.ClaimStore{a, b} {
		wg.Go(func() {
			for {
				n, err := s.Clean(ctx, 7)
				assert.NoError(t, err)
				assert.LessOrEqual(t, n, 7)
				cleaned.Add(int64(n))
				if n < 7 || err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(items), cleaned.Load())
	counts, err = b.Counts(ctx, "q")
	require.NoError(t, err)
	assert.Equal(t, claim.Counts{}, counts)
}
