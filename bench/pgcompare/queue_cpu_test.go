package pgcompare

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCPUProbeOffWithoutTheVariable(t *testing.T) {
	t.Setenv(CPUEnv, "")
	p := startCPU(context.Background(), "", "setting", 100)
	assert.Nil(t, p)
	p.stop() // a nil probe's stop does nothing
}

func TestCPUProbeWritesItsFiguresAndProfiles(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(CPUEnv, dir)
	t.Setenv(WaitsEnv, "")
	p := startCPU(context.Background(), "", "lease (100 workers)", 10_000)
	require.NotNil(t, p)
	var out bytes.Buffer
	p.out = &out
	p.stop()
	assert.Contains(t, out.String(), "cpu lease (100 workers): wall ")
	assert.Contains(t, out.String(), "per 10,000 items: this process ")
	assert.Contains(t, out.String(), "fixed work before/after: hash of 4 MiB ")
	for _, ext := range []string{".pprof", ".allocs0", ".allocs1"} {
		st, err := os.Stat(p.profBase + ext)
		require.NoError(t, err, ext)
		assert.Positive(t, st.Size(), ext)
	}
	assert.Equal(t, dir, filepath.Dir(p.profBase))
}

func TestMachineCPUCounts(t *testing.T) {
	m := machineCPU()
	if _, err := os.Stat("/proc/stat"); err != nil {
		assert.Equal(t, [2]float64{}, m)
		return
	}
	assert.Positive(t, m[1])
	assert.LessOrEqual(t, m[0], m[1])
}

func TestCalibrationTimesBothPieces(t *testing.T) {
	c := calibrate()
	assert.Positive(t, c.hash)
	assert.Positive(t, c.walk)
	assert.Less(t, c.walk, time.Second)
	// The walk's buffer is one cycle through every slot.
	steps, j := 1, walkBuf[0]
	for ; j != 0 && steps <= len(walkBuf); steps++ {
		j = walkBuf[j]
	}
	assert.Equal(t, len(walkBuf), steps)
}
