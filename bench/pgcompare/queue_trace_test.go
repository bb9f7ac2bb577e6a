package pgcompare

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPickupTraceReportsMediansOfSteps checks that a trace keeps the steps
// between an enqueue and its handler, first and last, ignores what happens
// outside a pickup, and forgets what it reported.
func TestPickupTraceReportsMediansOfSteps(t *testing.T) {
	var out bytes.Buffer
	tr := &pickupTrace{label: "test", out: &out}
	tr.mark("claimed") // before any pickup: ignored
	for range 3 {
		tr.begin()
		tr.mark("enqueued")
		tr.mark("claim sent")
		tr.mark("claim sent")
		tr.mark("handler")
		tr.mark("settled") // after the handler began: not this pickup's
	}
	tr.report()
	s := out.String()
	assert.Contains(t, s, "trace test, 3 pickups")
	assert.Contains(t, s, "enqueued ")
	assert.Contains(t, s, "last claim sent ")
	assert.Contains(t, s, "handler ")
	assert.NotContains(t, s, "settled")
	assert.NotContains(t, s, "claimed")
	assert.Equal(t, 3, strings.Count(s, "slow pickup "), "the slowest pickups step by step")
	assert.Contains(t, s, "slow pickup 1 of 3 at ")

	out.Reset()
	tr.report()
	assert.Empty(t, out.String(), "nothing traced since the last report")
}

// TestSplitSettingsSmall runs the settings with kinds alone and retention
// alone, traced, at a size CI can afford.
func TestSplitSettingsSmall(t *testing.T) {
	t.Setenv(TraceEnv, "1")
	cfg := Config{DSN: os.Getenv(dsnEnv), N: 300, Batch: 100, Pickup: 5, PickupWarmup: 1, TxItems: 20, TxRounds: 1, Runs: 1, Timeout: time.Minute}
	settings := SplitSettings()
	require.Len(t, settings, 2)
	rep, err := Measure(ctx, cfg, settings)
	require.NoError(t, err)
	for _, row := range rep.Rows {
		assert.Positive(t, row.Median.BurnDownPerSec, row.Setting)
		assert.Positive(t, row.Median.PickupP50, row.Setting)
		assert.Positive(t, row.Median.PickupAfterP50, row.Setting)
	}
}

// TestBurnCountsCountClaimsAndSettles checks the burn-down counts: claims
// by size bucket and in order, and the settles in flight as each began.
func TestBurnCountsCountClaimsAndSettles(t *testing.T) {
	var c burnCounts
	for _, n := range []int{100, 1, 99, 0} {
		c.claimEnd(c.claimStart(), n)
	}
	assert.Equal(t, int64(4), c.claims.Load())
	assert.Equal(t, int64(200), c.claimed.Load())
	assert.Equal(t, []int64{100, 1, 99, 0, 0}, []int64{c.first[0].Load(), c.first[1].Load(), c.first[2].Load(), c.first[3].Load(), c.first[4].Load()})
	assert.Equal(t, int64(1), c.sizes[0].Load()) // 0
	assert.Equal(t, int64(1), c.sizes[1].Load()) // 1
	assert.Equal(t, int64(2), c.sizes[5].Load()) // 65 and more
	a, b := c.settleStart(), c.settleStart()
	c.settleEnd(a)
	c.settleEnd(b)
	assert.Equal(t, int64(2), c.settles.Load())
	assert.Equal(t, int64(3), c.settlingSum.Load()) // 1 then 2 in flight
	assert.Equal(t, int64(2), c.settlingMax.Load())
	assert.Zero(t, c.settling.Load())
}
