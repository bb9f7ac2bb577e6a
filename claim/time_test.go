package claim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// TestWallClockSteppingBackNeverHandsAnItemOutTwice: the Broker reads the
// clock at T+1h, the wall clock then steps back to T. The service reads the
// step as time standing still, so a claim made now lives until T+1h+30s on
// its time; the Broker must judge the claim on that same time, or it takes
// the item back at once and hands it out again while the first lease is
// live.
func TestWallClockSteppingBackNeverHandsAnItemOutTwice(t *testing.T) {
	b, svc, clk := newBroker(t)
	clk.Advance(time.Hour)
	enqueue(t, b, "other", "x") // the Broker reads the clock at T+1h
	clk.Rewind(time.Hour)

	it := enqueue(t, b, q, "p")
	first := claimOne(t, b, q, "w1")
	assert.Equal(t, t0.Add(time.Hour+ttl), first.ExpiresAt, "the service's time stood still at T+1h")

	again, err := b.Claim(ctx, q, "w2", 1, ttl)
	require.NoError(t, err)
	l, infoErr := svc.Info(ctx, lease.ID(first.Ref.Token))
	require.NoError(t, infoErr, "the first claim's lease is live")
	assert.Empty(t, again, "claimed twice while the lease %d (until %s) is live", l.ID, l.ExpiresAt)
	assert.Equal(t, counts(0, 0, 1, 0), countsOf(t, b, q))

	// The clock catches up: the claim expires exactly at its ExpiresAt on
	// the service's time, and only then is the item handed out again.
	clk.Advance(time.Hour + ttl - 1)
	assert.Equal(t, counts(0, 0, 1, 0), countsOf(t, b, q))
	_, err = svc.Info(ctx, lease.ID(first.Ref.Token))
	require.NoError(t, err)
	clk.Advance(1)
	assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q))
	second := claimOne(t, b, q, "w2")
	assert.Equal(t, it.ID, second.Item)
	assert.Equal(t, 2, second.Attempt)
	requireStale(t, b.Complete(ctx, first))
	require.NoError(t, b.Complete(ctx, second))
}

// TestDelayedItemAfterAStepBack: a delay counts on the service's time too,
// so an item delayed across a step back becomes visible exactly when that
// time reaches its VisibleAt, and a waiting timer wakes for it.
func TestDelayedItemAfterAStepBack(t *testing.T) {
	b, _, clk := newBroker(t)
	clk.Advance(time.Hour)
	it := enqueue(t, b, q, "p", claim.Delay(time.Minute))
	assert.Equal(t, t0.Add(time.Hour+time.Minute), it.VisibleAt)
	clk.Rewind(time.Hour)
	late := enqueue(t, b, q, "p2", claim.Delay(time.Second))
	assert.Equal(t, t0.Add(time.Hour+time.Second), late.VisibleAt, "delayed from the service's time, not the wall clock's")

	clk.Advance(time.Hour + time.Second - 1)
	assert.Equal(t, counts(0, 2, 0, 0), countsOf(t, b, q))
	clk.Advance(1)
	assert.Equal(t, counts(1, 1, 0, 0), countsOf(t, b, q))
	clk.Advance(time.Minute - time.Second)
	assert.Equal(t, counts(2, 0, 0, 0), countsOf(t, b, q))
}
