package replication

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The probe syncs a file of its own in the directory while it runs, reports
// its latencies and leaves nothing behind.
func TestFsyncProbe(t *testing.T) {
	dir := t.TempDir()
	p, err := startFsyncProbe(dir)
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)
	require.Eventually(t, func() bool { return p.n.Load() >= 3 }, 10*time.Second, probeEvery)
	p50, p99, err := p.finish()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, p99, p50)
	assert.GreaterOrEqual(t, p50, 0.0)
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}
