package replicated

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

func TestCodecRoundTrip(t *testing.T) {
	cmds := []command{
		{op: opGrant, holder: "alice", purpose: lease.StateWrite, ttl: time.Second},
		{op: opGrantWithKey, holder: "bob", purpose: lease.Operation, ttl: time.Hour, key: "k", value: []byte{}},
		{op: opGrantWithKey, holder: "bob", purpose: lease.Operation, ttl: time.Hour, key: "k2"},
		{op: opRenew, id: 7},
		{op: opRenewTTL, id: 8, ttl: -time.Second},
		{op: opRevoke, id: 1 << 60},
		{op: opPut, key: "x", value: []byte("v"), id: 3},
		{op: opDelete, key: "x"},
	}
	data := encodeEntry(nil, -5, cmds)
	stamp, got, err := decodeEntry(data)
	require.NoError(t, err)
	assert.Equal(t, int64(-5), stamp)
	assert.Equal(t, cmds, got, "nil and empty values stay apart")

	tick := encodeEntry(nil, 42, nil)
	stamp, got, err = decodeEntry(tick)
	require.NoError(t, err)
	assert.Equal(t, int64(42), stamp)
	assert.Empty(t, got)

	for i := range data {
		_, _, err := decodeEntry(data[:i])
		assert.ErrorIs(t, err, errCorrupt, "truncated at %d", i)
	}
	_, _, err = decodeEntry(append(data, 0))
	assert.ErrorIs(t, err, errCorrupt, "trailing bytes")
	bad := append([]byte(nil), data...)
	bad[0] = 9
	_, _, err = decodeEntry(bad)
	assert.ErrorIs(t, err, errCorrupt, "unknown version")
	_, _, err = decodeEntry(encodeHeader(nil, 1, 1))
	assert.ErrorIs(t, err, errCorrupt, "missing command")
	_, _, err = decodeEntry(append(encodeHeader(nil, 1, 1), 99))
	assert.ErrorIs(t, err, errCorrupt, "unknown op")
}

func TestOpNames(t *testing.T) {
	assert.Equal(t, "grant", opGrantWithKey.String())
	assert.Equal(t, "renew", opRenewTTL.String())
	assert.Equal(t, "unknown", opCode(0).String())
	assert.Equal(t, "unknown", opCode(200).String())
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(encodeEntry(nil, 1, []command{{op: opPut, key: "k", value: []byte("v")}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		stamp, cmds, err := decodeEntry(data)
		if err != nil {
			return
		}
		again := encodeEntry(nil, stamp, cmds)
		stamp2, cmds2, err := decodeEntry(again)
		require.NoError(t, err)
		assert.Equal(t, stamp, stamp2)
		assert.Equal(t, cmds, cmds2)
	})
}
