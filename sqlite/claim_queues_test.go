package sqlite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

// A pause holds for every store on the file, those opened after it
// included, and a Resume through one store wakes a worker waiting in
// another, which learns of it by polling the file.
func TestPauseAcrossStores(t *testing.T) {
	t.Parallel()
	clk := leasetest.NewFakeClock(epoch)
	path := tempFile(t)
	ctx := t.Context()
	a := newClaimStore(t, path, testOptions(clk)...)
	_, err := a.Enqueue(ctx, []claim.NewItem{{Queue: "q", MaxAttempts: 1}})
	require.NoError(t, err)
	require.NoError(t, a.Pause(ctx, "q"))

	req := claim.ClaimRequest{Queue: "q", Owner: "b", Limit: 1, Lease: time.Hour}
	b := newClaimStore(t, path, testOptions(clk)...)
	got, err := b.Claim(ctx, req)
	require.NoError(t, err)
	assert.Empty(t, got, "paused through another store")
	require.NoError(t, b.Close())

	b = newClaimStore(t, path, testOptions(clk)...)
	got, err = b.Claim(ctx, req)
	require.NoError(t, err)
	assert.Empty(t, got, "still paused in a store opened later")
	queues, err := b.Queues(ctx, claim.QueueQuery{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, []claim.QueueInfo{{Name: "q", Counts: claim.Counts{Visible: 1}, Paused: true, PausedAt: epoch}}, queues)

	ready, stop := b.Notify("q")
	defer stop()
	require.NoError(t, a.Resume(ctx, "q"))
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("a Resume in another store did not wake the waiter")
	}
	got, err = b.Claim(ctx, req)
	require.NoError(t, err)
	assert.Len(t, got, 1, "claimable once resumed")
}
