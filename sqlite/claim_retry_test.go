package sqlite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// The store is a claimstore.Retrier: a Broker on it offers RetryNow, and an
// item delayed for an hour is claimable at once, by a store of another
// process on the file too.
func TestRetryNowThroughBroker(t *testing.T) {
	path := tempFile(t)
	b := lease.Must(claim.New(newClaimStore(t, path)))
	t.Cleanup(func() { _ = b.Close() })
	other := newClaimStore(t, path)
	require.True(t, b.Capabilities().RetryNow, "the console offers Retry now")
	it, err := b.Enqueue(t.Context(), "q", []byte("p"), claim.Delay(time.Hour))
	require.NoError(t, err)
	none, err := other.Claim(t.Context(), claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: time.Minute})
	require.NoError(t, err)
	require.Empty(t, none)
	got, err := b.RetryNow(t.Context(), "q", it.ID)
	require.NoError(t, err)
	assert.Equal(t, claim.Visible, got.State)
	claims, err := other.Claim(t.Context(), claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, claims, 1)
	assert.Equal(t, it.ID, claims[0].Item)
}
