package claim_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// RetryNow makes a delayed item (a backoff after a failure) claimable at
// once, keeping its attempts and history.
func TestRetryNowMakesADelayedItemClaimable(t *testing.T) {
	b, _, _ := newBroker(t)
	it := enqueue(t, b, q, "x")
	c := claimOne(t, b, q, "w")
	out, err := b.Fail(ctx, c, "boom", time.Hour, time.Hour)
	require.NoError(t, err)
	require.Equal(t, claim.Requeued, out)
	assert.Equal(t, counts(0, 1, 0, 0), countsOf(t, b, q))

	got, err := b.RetryNow(ctx, q, it.ID)
	require.NoError(t, err)
	assert.Equal(t, claim.Visible, got.State)
	assert.Equal(t, 1, got.Attempts)
	require.Len(t, got.History, 1)
	assert.Equal(t, "boom", got.History[0].Reason)
	assert.Equal(t, t0, got.VisibleAt, "visible now, on the store's clock")
	c = claimOne(t, b, q, "w")
	assert.Equal(t, 2, c.Attempt)

	again, err := b.RetryNow(ctx, q, enqueue(t, b, q, "y").ID)
	require.NoError(t, err, "a visible item is returned as it is")
	assert.Equal(t, claim.Visible, again.State)
}

// RetryNow refuses an item it cannot retry and changes nothing.
func TestRetryNowRefuses(t *testing.T) {
	b, _, _ := newBroker(t)
	claimed := enqueue(t, b, q, "x")
	claimOne(t, b, q, "w")
	delayed := enqueue(t, b, q, "y", claim.Delay(time.Minute))
	for _, tc := range []struct {
		name  string
		queue string
		id    claim.ItemID
	}{{"claimed", q, claimed.ID}, {"other queue", "other", delayed.ID}, {"missing", q, 999}} {
		_, err := b.RetryNow(ctx, tc.queue, tc.id)
		require.ErrorIs(t, err, claim.ErrNotFound, tc.name)
	}
	_, err := b.RetryNow(ctx, "", delayed.ID)
	assert.Equal(t, "queue", requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument).Field)
	assert.Equal(t, counts(0, 1, 1, 0), countsOf(t, b, q))
}

// A store that is not a Retrier gets ErrUnsupported, and Capabilities
// says so beforehand.
func TestRetryNowUnsupported(t *testing.T) {
	b, svc, _ := newBroker(t)
	assert.Equal(t, claim.Capabilities{Pause: true, Queues: true, RetryNow: true, Clean: true}, b.Capabilities())
	plain := lease.Must(claim.New(struct{ claim.Store }{lease.Must(claim.NewMemory(svc))}))
	t.Cleanup(func() { require.NoError(t, plain.Close()) })
	assert.Equal(t, claim.Capabilities{}, plain.Capabilities())
	_, err := plain.RetryNow(ctx, q, 1)
	require.ErrorIs(t, err, claim.ErrUnsupported)
	assert.Equal(t, "store", requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument).Field)
	var le *lease.Error
	require.True(t, errors.As(err, &le))
}
