package hacompare

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRetainedTiny keeps a few items on a TLS cluster and checks every
// figure was measured.
func TestRetainedTiny(t *testing.T) {
	cfg := SystemConfig{Cluster: ClusterConfig{TLS: true, Dir: t.TempDir()}, Workers: 10}
	res, err := MeasureRetained(context.Background(), cfg, 300, 100, nil)
	require.NoError(t, err)
	assert.Equal(t, 300, res.Items)
	assert.Positive(t, res.HeapAfter)
	assert.Positive(t, res.SnapshotLeader)
	assert.Positive(t, res.SnapshotFollower)
	assert.Positive(t, res.SnapshotBytes)
	assert.Positive(t, res.Restore)
	var md bytes.Buffer
	require.NoError(t, res.WriteMarkdown(&md, cfg))
	assert.Contains(t, md.String(), "keeps 300 completed items")
}

// TestKillTiny kills the leader of a plain-TCP cluster half way through a
// small burn-down and checks that the rest completes, each item settled.
func TestKillTiny(t *testing.T) {
	cfg := SystemConfig{Cluster: ClusterConfig{Dir: t.TempDir()}, Workers: 9, Retention: true, Lease: 2 * time.Second}
	res, err := MeasureKill(context.Background(), cfg, 600, 100, nil)
	require.NoError(t, err)
	// The kill follows the 300th completion; workers may complete a few
	// more before it lands.
	assert.GreaterOrEqual(t, res.KilledAt, 300)
	assert.Less(t, res.KilledAt, 600)
	assert.Positive(t, res.Election)
	assert.Greater(t, res.Total, res.Election)
	assert.Equal(t, res.Reruns, res.RerunsKilledNode+res.RerunsSurvivor)
	var md bytes.Buffer
	require.NoError(t, res.WriteMarkdown(&md, cfg))
	assert.Contains(t, md.String(), "completed count = items")
}

// TestWorkersOn checks how the workers are placed on the nodes.
func TestWorkersOn(t *testing.T) {
	s := &haSystem{cfg: SystemConfig{Workers: 100}, leader: 1}
	assert.Equal(t, []int{0, 100, 0}, []int{s.workersOn(0), s.workersOn(1), s.workersOn(2)})
	s.cfg.Spread = true
	assert.Equal(t, []int{34, 33, 33}, []int{s.workersOn(0), s.workersOn(1), s.workersOn(2)})
}
