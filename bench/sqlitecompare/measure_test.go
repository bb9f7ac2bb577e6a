package sqlitecompare

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tinyConfig is a measurement CI can afford: every queue, every phase,
// once, on a few items.
func tinyConfig(t *testing.T, progress io.Writer) Config {
	return Config{
		Dir: t.TempDir(), Floor: 50 * time.Millisecond,
		BurnDown: 10, Workers: []int{2}, Enqueue: 20, Batch: 15,
		EnqueueOne: 10, Goroutines: 4,
		Pickup: 2, PickupWarmup: 1, PickupWorkers: 2,
		Runs: 1, Timeout: time.Minute, Progress: progress,
	}
}

// logWriter logs each write, with the time since start.
type logWriter struct {
	t     *testing.T
	start time.Time
}

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Logf("%6.2fs %s", time.Since(w.start).Seconds(), bytes.TrimSpace(p))
	return len(p), nil
}

// TestMeasureTiny runs the whole comparison at a tiny size: it checks that
// the harness and every adapter still work, not how fast they are.
func TestMeasureTiny(t *testing.T) {
	start := time.Now()
	cfg := tinyConfig(t, logWriter{t, start})
	rep, err := Measure(context.Background(), cfg)
	require.NoError(t, err)

	require.Len(t, rep.Columns, len(Queues()))
	assert.Positive(t, rep.FloorMedian)
	for _, col := range rep.Columns {
		require.Len(t, col.Runs, 1, col.Queue)
		m := col.Median
		require.Len(t, m.BurnDown, 1, col.Queue)
		for _, r := range m.BurnDown {
			assert.Positive(t, r, col.Queue)
		}
		assert.Positive(t, m.EnqueueBatch, col.Queue)
		assert.Positive(t, m.EnqueueSerial, col.Queue)
		assert.Positive(t, m.EnqueueConcurrent, col.Queue)
		assert.Positive(t, m.PickupP50, col.Queue)
		assert.GreaterOrEqual(t, m.PickupP99, m.PickupP50, col.Queue)
		assert.Positive(t, m.CrossP50, col.Queue)
		assert.GreaterOrEqual(t, m.CrossP99, m.CrossP50, col.Queue)
		if col.Queue == OursName {
			assert.Positive(t, m.BurnDownPerCommit[0], "ours counts its commits")
			assert.Positive(t, m.ConcurrentPerCommit, "ours counts its commits")
		} else {
			assert.Zero(t, m.ConcurrentPerCommit, col.Queue)
		}
	}
}

// TestMemorySoakTiny passes a few items through the store and checks the
// samples are taken.
func TestMemorySoakTiny(t *testing.T) {
	samples, err := MemorySoak(context.Background(), t.TempDir(), SyncNormal, 200, 4, 30, 60)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(samples), 3)
	assert.Equal(t, 0, samples[0].Items)
	assert.Equal(t, 200, samples[len(samples)-1].Items)
	for _, s := range samples {
		assert.Positive(t, s.HeapInuse)
		assert.Positive(t, s.LiveHeap)
	}
}

// TestHistoryTiny runs the comparison at a tiny size on files that hold a
// history, and checks that the history is there: the rows each queue
// keeps, loaded into its template, and our store opened with a retention
// that keeps what the run completes.
func TestHistoryTiny(t *testing.T) {
	start := time.Now()
	cfg := tinyConfig(t, logWriter{t, start})
	cfg.History = 50
	rep, err := Measure(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rep.Columns, len(Queues()))
	var md bytes.Buffer
	require.NoError(t, WriteHistoryMarkdown(&md, []*Report{rep, rep}))
	assert.Contains(t, md.String(), "| 50 rows | 50 rows |")

	ctx := context.Background()
	cfg = cfg.withDefaults()
	for _, q := range Queues() {
		if q.FillHistory == nil {
			continue
		}
		q = withRetention(q)
		path := t.TempDir() + "/history.db"
		require.NoError(t, withSystem(ctx, cfg, q, path, func(System) error { return nil }), q.Name)
		_, err := loadHistory(ctx, cfg, q, path, 50)
		require.NoError(t, err, q.Name)
		db, err := openDB(ctx, path, cfg.Sync)
		require.NoError(t, err)
		table := map[string]string{OursName: "lease_claims WHERE state = 5", RiverName: "river_job WHERE state = 'completed'"}[q.Name]
		var n int
		require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n))
		require.NoError(t, db.Close())
		assert.Equal(t, 50, n, q.Name)
		if q.Name == OursName {
			// The store counts the loaded rows as completed items of the queue.
			err := withSystem(ctx, cfg, q, path, func(sys System) error {
				c, err := sys.(*retainedSystem).store.Counts(ctx, ourQueue)
				assert.Equal(t, 50, c.Completed)
				return err
			})
			require.NoError(t, err)
		}
	}
}
