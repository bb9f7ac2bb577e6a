package claim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

func TestUniqueByPayloadAndPeriod(t *testing.T) {
	b, _, clk := newBroker(t)
	daily := claim.Unique(claim.UniqueOpts{ByPayload: true, ByPeriod: 24 * time.Hour})
	first := enqueue(t, b, q, "report", daily)
	assert.False(t, first.Duplicate)
	again := enqueue(t, b, q, "report", daily)
	assert.True(t, again.Duplicate, "the same payload in the same period")
	assert.Equal(t, first.ID, again.ID)
	other := enqueue(t, b, q, "another report", daily)
	assert.False(t, other.Duplicate, "another payload is distinct")
	clk.Advance(24 * time.Hour)
	next := enqueue(t, b, q, "report", daily)
	assert.False(t, next.Duplicate, "the next period is distinct")
	assert.NotEqual(t, first.ID, next.ID)
}

// With retention, a completed unique item holds its key until cleaned.
func TestUniqueHeldByCompletedItemUntilCleaned(t *testing.T) {
	b, clk := newRetainingBroker(t, claim.Retention{Completed: time.Hour})
	once := claim.Unique(claim.UniqueOpts{ByPayload: true})
	first := enqueue(t, b, q, "x", once)
	require.NoError(t, b.Complete(ctx, claimOne(t, b, q, "w")))
	again := enqueue(t, b, q, "x", once)
	assert.True(t, again.Duplicate)
	assert.Equal(t, claim.Completed, again.State)
	clk.Advance(time.Hour)
	n, err := b.Clean(ctx, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	fresh := enqueue(t, b, q, "x", once)
	assert.False(t, fresh.Duplicate)
	assert.NotEqual(t, first.ID, fresh.ID)
}

// With ByState, a unique item blocks a new one only in those states: a
// completed one, kept by the retention, gives its key up and stays.
func TestUniqueByState(t *testing.T) {
	b, _ := newRetainingBroker(t, claim.Retention{Completed: time.Hour})
	live := claim.Unique(claim.UniqueOpts{ByPayload: true, ByState: []claim.State{claim.Visible, claim.Delayed, claim.Claimed}})
	first := enqueue(t, b, q, "x", live)
	assert.True(t, enqueue(t, b, q, "x", live).Duplicate, "a visible item blocks")
	require.NoError(t, b.Complete(ctx, claimOne(t, b, q, "w")))
	next := enqueue(t, b, q, "x", live)
	assert.False(t, next.Duplicate, "a completed item does not")
	assert.NotEqual(t, first.ID, next.ID)
	assert.Equal(t, next.Key, claim.UniqueKey("", []byte("x"), claim.UniqueOpts{ByPayload: true}, time.Time{}))
	old, err := b.Lookup(ctx, first.ID)
	require.NoError(t, err)
	assert.Equal(t, claim.Completed, old.State)
	assert.Empty(t, old.Key)
	again := enqueue(t, b, q, "x", claim.Unique(claim.UniqueOpts{ByPayload: true}))
	assert.Equal(t, next.ID, again.ID, "without ByState every state blocks")
}

func TestUniqueBadInput(t *testing.T) {
	b, _, _ := newBroker(t)
	_, err := b.Enqueue(ctx, q, nil, claim.Unique(claim.UniqueOpts{ByPeriod: -time.Second}))
	le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "unique.by_period", le.Field)
	_, err = b.Enqueue(ctx, q, nil, claim.Key("k"), claim.Unique(claim.UniqueOpts{}))
	le = requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "key", le.Field)
	_, err = b.Enqueue(ctx, q, nil, claim.Unique(claim.UniqueOpts{ByState: []claim.State{claim.Visible, 0}}))
	le = requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "key_states[1]", le.Field)
	_, err = b.EnqueueMany(ctx, []claim.NewItem{{Queue: q, KeyStates: []claim.State{claim.Visible}}})
	le = requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "items[0].key_states", le.Field)
	assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
}
