package etcd

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHeldFillsItsLimitPastForeignKeys: keys that are not holdings do not
// make Held return fewer than limit while more locks are held.
func TestHeldFillsItsLimitPastForeignKeys(t *testing.T) {
	p := newTestProvider(t)
	ctx := context.Background()
	for _, n := range []string{"a", "c", "e"} {
		_, err := testClient.Put(ctx, p.key(n), "not a holding")
		require.NoError(t, err)
	}
	for _, n := range []string{"b", "d", "f"} {
		l, err := p.AcquireValue(ctx, n, "x", time.Minute, []byte(n))
		require.NoError(t, err)
		require.NotNil(t, l)
	}
	got, err := p.Held(ctx, "", 2)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "b", got[0].Name)
	assert.Equal(t, []byte("d"), got[1].Value)
	all, err := p.Held(ctx, "", 0)
	require.NoError(t, err)
	assert.Len(t, all, 3)
	_, ok, err := p.Holder(ctx, "a")
	require.NoError(t, err)
	assert.False(t, ok, "a foreign key has no holder to report")
}
