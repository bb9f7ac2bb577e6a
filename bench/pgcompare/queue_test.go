package pgcompare

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueuesSmall runs the whole queue comparison at a size CI can afford:
// every River setting, once, on 500 items and 8 pickups.
func TestQueuesSmall(t *testing.T) {
	var progress bytes.Buffer
	cfg := Config{DSN: os.Getenv(dsnEnv), N: 500, Batch: 200, Pickup: 8, PickupWarmup: 1, Runs: 1, Timeout: time.Minute, Progress: &progress}
	settings := append(RiverSettings(), OurSettings()...)
	rep, err := Measure(ctx, cfg, settings)
	require.NoError(t, err)
	t.Log("\n" + progress.String())

	require.Len(t, rep.Rows, len(settings))
	for _, row := range rep.Rows {
		require.Len(t, row.Runs, 1, row.Setting)
		m := row.Median
		assert.Positive(t, m.EnqueuePerSec, row.Setting)
		assert.Positive(t, m.BurnDownPerSec, row.Setting)
		assert.Positive(t, m.PickupP50, row.Setting)
		assert.GreaterOrEqual(t, m.PickupP99, m.PickupP50, row.Setting)
	}
	for _, name := range []string{"fsync", "synchronous_commit", "server_version"} {
		assert.NotEmpty(t, rep.Server[name], name)
	}

	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	for _, s := range settings {
		assert.Contains(t, md.String(), s.Name)
	}
	assert.Contains(t, md.String(), "fsync="+rep.Server["fsync"])
	var svg bytes.Buffer
	require.NoError(t, rep.WriteSVG(&svg))
	assert.True(t, strings.HasPrefix(svg.String(), "<svg"), svg.String())
	assert.Contains(t, svg.String(), "River tuned")

	// The databases of the runs are gone.
	conn, err := pgx.Connect(ctx, cfg.DSN)
	require.NoError(t, err)
	defer func() { require.NoError(t, conn.Close(ctx)) }()
	var left int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname LIKE 'pgcompare_queues_%'").Scan(&left))
	assert.Zero(t, left)
}

func TestPercentileAndMedian(t *testing.T) {
	ds := make([]time.Duration, 200)
	for i := range ds {
		ds[len(ds)-1-i] = time.Duration(i+1) * time.Millisecond
	}
	assert.Equal(t, 100*time.Millisecond, percentile(ds, 50))
	assert.Equal(t, 198*time.Millisecond, percentile(ds, 99))
	assert.Equal(t, 200*time.Millisecond, percentile(ds, 100))
	assert.Equal(t, time.Millisecond, percentile([]time.Duration{time.Millisecond}, 99))
	assert.Zero(t, percentile(nil, 50))
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 2, 3}))
	m := medianRun([]Run{{EnqueuePerSec: 1, PickupP50: 3}, {EnqueuePerSec: 5, PickupP50: 1}, {EnqueuePerSec: 2, PickupP50: 2}})
	assert.Equal(t, Run{EnqueuePerSec: 2, PickupP50: 2}, m)
}
