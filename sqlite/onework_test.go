package sqlite_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// One worker burns a queue down in about one commit per item: the
// settlement of an item and the claim of the next, submitted together as
// its handler returns, share a transaction. Each item is handled exactly
// once and none is left.
func TestOneWorkerSharesCommits(t *testing.T) {
	const n = 300
	commits := burnDownCommits(t, n, 1)
	assert.LessOrEqual(t, commits, int64(n+n/4), "a settlement and the next claim share a commit")
}

// Ten workers burn a queue down in batches of several items a commit:
// the callers a commit answers send their next writes at once, and the
// committer lets them run before it takes the next batch.
func TestTenWorkersShareCommits(t *testing.T) {
	const n = 600
	commits := burnDownCommits(t, n, 10)
	assert.LessOrEqual(t, commits, int64(n/3), "the writes of ten workers share commits")
}

// burnDownCommits works n items off a fresh queue with workers handlers,
// checks that each ran exactly once and none is left, and returns the
// commits the burn-down took.
func burnDownCommits(t *testing.T, n, workers int) int64 {
	t.Helper()
	s := newClaimStore(t, tempFile(t))
	b := lease.Must(claim.New(s))
	t.Cleanup(func() { _ = b.Close() })
	items := make([]claim.NewItem, n)
	for i := range items {
		items[i] = claim.NewItem{Queue: "q"}
	}
	_, err := b.EnqueueMany(t.Context(), items)
	require.NoError(t, err)
	before := s.Transactions()

	var mu sync.Mutex
	runs := map[claim.ItemID]int{}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	err = b.Work(ctx, claim.Worker{Queue: "q", Concurrency: workers, Handler: func(_ context.Context, c claim.Claim) error {
		mu.Lock()
		defer mu.Unlock()
		runs[c.Item]++
		if len(runs) == n {
			stop()
		}
		return nil
	}})
	require.NoError(t, err)
	commits := s.Transactions() - before

	assert.Len(t, runs, n)
	for id, k := range runs {
		assert.Equal(t, 1, k, "item %d handled %d times", id, k)
	}
	counts, err := s.Counts(t.Context(), "q")
	require.NoError(t, err)
	assert.Equal(t, claim.Counts{}, counts, "every item completed")
	t.Logf("%d items in %d commits", n, commits)
	return commits
}
