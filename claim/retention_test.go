package claim_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

// newRetainingBroker returns a Broker over a Memory keeping items for r.
func newRetainingBroker(t *testing.T, r claim.Retention) (*claim.Broker, *leasetest.FakeClock) {
	t.Helper()
	clk := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(clk)))
	m := lease.Must(claim.NewMemory(svc))
	require.NoError(t, m.SetRetention(r))
	b := lease.Must(claim.New(m))
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, svc.Close())
	})
	return b, clk
}

func TestRetentionCheckNamesTheField(t *testing.T) {
	for field, r := range map[string]claim.Retention{
		"retention.completed": {Completed: -1},
		"retention.cancelled": {Cancelled: -time.Second},
		"retention.dead":      {Dead: -time.Hour},
	} {
		le := requireCode(t, r.Check(), lease.CodeInvalidArgument, lease.ErrInvalidArgument)
		assert.Equal(t, field, le.Field)
	}
	require.NoError(t, claim.StandardRetention.Check())
	require.NoError(t, claim.Retention{}.Check())
}

func TestSetRetentionRefusesBadInputAndChangesNothing(t *testing.T) {
	svc := lease.Must(lease.New())
	defer func() { require.NoError(t, svc.Close()) }()
	m := lease.Must(claim.NewMemory(svc))
	defer func() { require.NoError(t, m.Close()) }()
	require.NoError(t, m.SetRetention(claim.Retention{Completed: time.Hour}))
	err := m.SetRetention(claim.Retention{Completed: time.Minute, Dead: -1})
	le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "retention.dead", le.Field)
	// The earlier retention holds: a completed item is kept.
	_, err = m.Enqueue(ctx, []claim.NewItem{{Queue: q, MaxAttempts: 1}})
	require.NoError(t, err)
	cs, err := m.Claim(ctx, claim.ClaimRequest{Queue: q, Owner: "w", Limit: 1, Lease: ttl})
	require.NoError(t, err)
	require.NoError(t, m.Settle(ctx, claim.Settlement{Ref: cs[0].Ref, How: claim.SettleComplete}))
	it, err := m.Lookup(ctx, cs[0].Item)
	require.NoError(t, err)
	assert.Equal(t, claim.Completed, it.State)
}

func TestBrokerCompleteKeepsItemUntilCleaned(t *testing.T) {
	b, clk := newRetainingBroker(t, claim.StandardRetention)
	it := enqueue(t, b, q, "x")
	c := claimOne(t, b, q, "w")
	require.NoError(t, b.Complete(ctx, c))
	got, err := b.Lookup(ctx, it.ID)
	require.NoError(t, err)
	assert.Equal(t, claim.Completed, got.State)
	assert.Equal(t, t0, got.FinishedAt)
	n, err := b.Clean(ctx, 10)
	require.NoError(t, err)
	assert.Zero(t, n)
	clk.Advance(24 * time.Hour)
	n, err = b.Clean(ctx, 10)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	_, err = b.Lookup(ctx, it.ID)
	require.ErrorIs(t, err, claim.ErrNotFound)
}

func TestBrokerCleanBadInput(t *testing.T) {
	b, _ := newRetainingBroker(t, claim.StandardRetention)
	_, err := b.Clean(ctx, 0)
	le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "limit", le.Field)
	err = b.RunCleaner(ctx, claim.CleanerConfig{Interval: -time.Second})
	le = requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "interval", le.Field)
	err = b.RunCleaner(ctx, claim.CleanerConfig{Batch: -1})
	le = requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "batch", le.Field)
	err = b.RunCleaner(ctx, claim.CleanerConfig{Pause: -time.Second})
	le = requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "pause", le.Field)

	svc := lease.Must(lease.New())
	defer func() { require.NoError(t, svc.Close()) }()
	plain := lease.Must(claim.New(struct{ claim.Store }{lease.Must(claim.NewMemory(svc))}))
	defer func() { require.NoError(t, plain.Close()) }()
	_, err = plain.Clean(ctx, 1)
	le = requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "store", le.Field)
}

// RunCleaner removes, round after round on the Broker's clock, what has
// passed its retention, in batches, and returns when the Broker closes.
func TestRunCleanerCleansInRoundsAndStopsAtClose(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(clk)))
	defer func() { require.NoError(t, svc.Close()) }()
	m := lease.Must(claim.NewMemory(svc))
	require.NoError(t, m.SetRetention(claim.Retention{Completed: time.Minute}))
	b := lease.Must(claim.New(m))
	for range 5 {
		enqueue(t, b, q, "x")
		require.NoError(t, b.Complete(ctx, claimOne(t, b, q, "w")))
	}
	done := make(chan error, 1)
	go func() { done <- b.RunCleaner(ctx, claim.CleanerConfig{Interval: time.Minute, Batch: 2}) }()
	completed := func() int {
		c, err := b.Counts(ctx, q)
		require.NoError(t, err)
		return c.Completed
	}
	assert.Equal(t, 5, completed())
	// The first round found nothing due and waits a minute: move the clock
	// once the cleaner's timer is armed, until a round has cleaned all.
	require.Eventually(t, func() bool {
		if completed() == 0 {
			return true
		}
		clk.Advance(time.Minute)
		return false
	}, 10*time.Second, time.Millisecond)
	require.NoError(t, b.Close())
	require.NoError(t, <-done)
}

// Within a round, RunCleaner pauses between two full batches on the
// Broker's clock, so that a backlog goes at a bounded rate.
func TestRunCleanerPausesBetweenBatches(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(clk)))
	defer func() { require.NoError(t, svc.Close()) }()
	m := lease.Must(claim.NewMemory(svc))
	require.NoError(t, m.SetRetention(claim.Retention{Completed: time.Minute}))
	b := lease.Must(claim.New(m))
	for range 5 {
		enqueue(t, b, q, "x")
		require.NoError(t, b.Complete(ctx, claimOne(t, b, q, "w")))
	}
	clk.Advance(2 * time.Minute)
	completed := func() int {
		c, err := b.Counts(ctx, q)
		require.NoError(t, err)
		return c.Completed
	}
	pending := clk.Pending()
	done := make(chan error, 1)
	go func() {
		done <- b.RunCleaner(ctx, claim.CleanerConfig{Interval: time.Hour, Batch: 2, Pause: time.Second})
	}()
	for _, left := range []int{3, 1} {
		require.Eventually(t, func() bool { return clk.Pending() > pending }, 10*time.Second, time.Millisecond)
		assert.Equal(t, left, completed(), "one batch, then the pause")
		next, ok := clk.NextDeadline()
		require.True(t, ok)
		assert.Equal(t, clk.Now().Add(time.Second), next)
		clk.Advance(time.Second)
	}
	require.Eventually(t, func() bool { return completed() == 0 }, 10*time.Second, time.Millisecond)
	require.NoError(t, b.Close())
	require.NoError(t, <-done)
}

// A cancelled context ends RunCleaner with nil.
func TestRunCleanerStopsWithContext(t *testing.T) {
	b, _ := newRetainingBroker(t, claim.StandardRetention)
	c, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.RunCleaner(c, claim.CleanerConfig{}) }()
	cancel()
	require.NoError(t, <-done)
}
