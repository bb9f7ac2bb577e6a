package etcd

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAcquireWaitOutlastsASkewedExpiry: a key whose recorded ExpiresAt has
// passed while its etcd lease lives on (a holder's clock running ahead)
// stays held for AcquireWait too, past ExpiryWait, until etcd deletes the
// key; then the waiter gets the lock, with its value.
func TestAcquireWaitOutlastsASkewedExpiry(t *testing.T) {
	p := newTestProvider(t)
	ctx := context.Background()
	_, rev := putSkewed(t, p, "x", 2)
	start := time.Now()
	l, err := p.AcquireWait(ctx, "x", "b", time.Minute, []byte("b's"))
	require.NoError(t, err)
	require.NotNil(t, l)
	assert.Greater(t, time.Since(start), ExpiryWait, "it waited for etcd's expiry, not for ExpiryWait")
	assert.Greater(t, l.Token, uint64(rev))
	got, ok, err := p.Holder(ctx, "x")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []byte("b's"), got.Value)
	assert.Equal(t, l.Token, got.Token)
}
