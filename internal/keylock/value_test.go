package keylock

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The encoding is stored in a replicated node's log and snapshots: a key
// written by one version must read the same in the next.
func TestValueEncodingIsStable(t *testing.T) {
	b := encodeValue("exec-1", []byte("addr"))
	assert.Equal(t, []byte("\x06exec-1addr"), b)
	exec, v, ok := decodeValue(b)
	require.True(t, ok)
	assert.Equal(t, "exec-1", exec)
	assert.Equal(t, []byte("addr"), v)

	exec, v, ok = decodeValue(encodeValue("e", nil))
	require.True(t, ok)
	assert.Equal(t, "e", exec)
	assert.Nil(t, v)

	for _, bad := range [][]byte{nil, {0}, {9, 'a'}, {0x80}} {
		_, _, ok := decodeValue(bad)
		assert.False(t, ok, "%q", bad)
	}
}
