package sqlitecompare

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHistoryInterleavesSizes measures two rounds of an empty file and
// one with a history, and checks that each size's Report holds a run of
// each round, with the medians of those, and that the round order went
// size by size within each round (the progress lines alternate).
func TestHistoryInterleavesSizes(t *testing.T) {
	var progress bytes.Buffer
	cfg := tinyConfig(t, &progress)
	cfg.Runs = 2
	cfg.Queues = []string{OursName}
	reps, err := MeasureHistory(context.Background(), cfg, []int{40})
	require.NoError(t, err)
	require.Len(t, reps, 2)
	for i, want := range []int{0, 40} {
		rep := reps[i]
		assert.Equal(t, want, rep.Config.History)
		assert.True(t, rep.Config.Retention, "the empty files keep what they complete too")
		assert.Equal(t, 2, rep.Config.Runs)
		assert.Len(t, rep.Floor, 2)
		require.Len(t, rep.Columns, 1)
		assert.Len(t, rep.Columns[0].Runs, 2)
		assert.Positive(t, rep.Columns[0].Median.BurnDown[0])
	}
	// Each round loads the history once: two loads, one per round, each
	// after an empty measurement.
	lines := strings.Split(progress.String(), "\n")
	var order []string
	for _, l := range lines {
		if strings.Contains(l, "finished items loaded") {
			order = append(order, "history")
		} else if strings.HasPrefix(l, "floor run") {
			order = append(order, "floor")
		}
	}
	assert.Equal(t, []string{"floor", "history", "floor", "floor", "history", "floor"}, order)
}

// TestRetainedSettledSkipsCounts checks that the retained store's Settled
// returns once the queue has no live item, beside finished rows.
func TestRetainedSettledSkipsCounts(t *testing.T) {
	ctx := context.Background()
	cfg := tinyConfig(t, nil).withDefaults()
	q, ok := queueByName(OursName)
	require.True(t, ok)
	q = withRetention(q)
	path := t.TempDir() + "/settled.db"
	require.NoError(t, withSystem(ctx, cfg, q, path, func(System) error { return nil }))
	_, err := loadHistory(ctx, cfg, q, path, 30)
	require.NoError(t, err)
	err = withSystem(ctx, cfg, q, path, func(sys System) error {
		rs, ok := sys.(*retainedSystem)
		require.True(t, ok)
		require.NoError(t, rs.EnqueueBatch(ctx, 3))
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		assert.ErrorIs(t, rs.Settled(short), context.DeadlineExceeded, "three items wait")
		done := make(chan struct{}, 3)
		require.NoError(t, rs.Start(ctx, 2, Observer{Started: func(uint64) {}, Completed: func() { done <- struct{}{} }}))
		for range 3 {
			<-done
		}
		return rs.Settled(ctx)
	})
	require.NoError(t, err)
}
