package sqlite_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/sqlite"
)

// An item enqueued visible just as an inspection read starts, and written
// before the read's snapshot, is read as visible, as it always was, never
// as delayed: the read takes its time from the store's clock after its
// snapshot. The hook enqueues the item, a second later on the store's
// clock, as each read (Counts, Queues, List, Lookup) is about to take its
// snapshot.
func TestReadsCompareDueTimesAfterTheirSnapshot(t *testing.T) {
	clk := leasetest.NewFakeClock(epoch)
	var (
		s     *sqlite.ClaimStore
		armed atomic.Bool
	)
	hook := func() {
		if !armed.CompareAndSwap(true, false) {
			return
		}
		clk.Advance(time.Second)
		_, err := s.Enqueue(t.Context(), []claim.NewItem{{Queue: "q", MaxAttempts: 1}})
		assert.NoError(t, err)
	}
	s = newClaimStore(t, tempFile(t), append(testOptions(clk), sqlite.WithBeforeSnapshotHook(hook))...)

	armed.Store(true)
	c, err := s.Counts(t.Context(), "q")
	require.NoError(t, err)
	assert.Equal(t, claim.Counts{Visible: 1}, c, "Counts")

	armed.Store(true)
	qs, err := s.Queues(t.Context(), claim.QueueQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, qs, 1)
	assert.Equal(t, claim.Counts{Visible: 2}, qs[0].Counts, "Queues")

	armed.Store(true)
	items, err := s.List(t.Context(), claim.Query{Queue: "q", State: claim.Visible, Limit: 10})
	require.NoError(t, err)
	require.Len(t, items, 3, "List of the visible items")

	// The store numbers items in order: the hook's next is the one after.
	armed.Store(true)
	it, err := s.Lookup(t.Context(), items[2].ID+1)
	require.NoError(t, err)
	assert.Equal(t, claim.Visible, it.State, "Lookup")
}
