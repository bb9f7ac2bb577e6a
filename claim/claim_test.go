package claim_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

func TestClaimCarriesPayloadAttemptOwnerAndExpiry(t *testing.T) {
	b, svc, clk := newBroker(t)
	it := enqueue(t, b, q, "hello")
	clk.Advance(time.Second)

	c := claimOne(t, b, q, "w1")
	assert.Equal(t, q, c.Queue)
	assert.Equal(t, it.ID, c.Item)
	assert.Equal(t, "w1", c.Owner)
	assert.Equal(t, []byte("hello"), c.Payload)
	assert.Equal(t, 1, c.Attempt)
	assert.Equal(t, t0.Add(time.Second+ttl), c.ExpiresAt)

	// The claim is a lease held by the owner for Operation.
	l, err := svc.Use(ctx, lease.ID(c.Ref.Token), lease.Operation)
	require.NoError(t, err)
	assert.Equal(t, "w1", l.Holder)
	assert.Equal(t, ttl, l.TTL)
	assert.Equal(t, c.ExpiresAt, l.ExpiresAt)
	assert.Equal(t, counts(0, 0, 1, 0), countsOf(t, b, q))

	got, ok := lookup(t, b, it.ID)
	require.True(t, ok)
	assert.Equal(t, claim.Claimed, got.State)
	assert.Equal(t, 1, got.Attempts)
}

func TestClaimPayloadIsACopy(t *testing.T) {
	b, _, _ := newBroker(t)
	payload := []byte("abc")
	_, err := b.Enqueue(ctx, q, payload)
	require.NoError(t, err)
	payload[0] = 'x'
	c := claimOne(t, b, q, "w")
	assert.Equal(t, []byte("abc"), c.Payload)
}

func TestClaimOldestVisibleFirstUpToLimit(t *testing.T) {
	b, _, clk := newBroker(t)
	late := enqueue(t, b, q, "delayed", claim.Delay(time.Second))
	first := enqueue(t, b, q, "first")
	second := enqueue(t, b, q, "second")
	enqueue(t, b, "other", "elsewhere")
	clk.Advance(2 * time.Second)
	third := enqueue(t, b, q, "third")

	cs, err := b.Claim(ctx, q, "w", 2, ttl)
	require.NoError(t, err)
	require.Len(t, cs, 2)
	assert.Equal(t, first.ID, cs[0].Item)
	assert.Equal(t, second.ID, cs[1].Item)

	// The delayed item became visible at t0+1s, before third was enqueued.
	cs, err = b.Claim(ctx, q, "w", 10, ttl)
	require.NoError(t, err)
	require.Len(t, cs, 2)
	assert.Equal(t, late.ID, cs[0].Item)
	assert.Equal(t, third.ID, cs[1].Item)
}

func TestClaimNothingVisibleIsEmptyNotError(t *testing.T) {
	b, _, _ := newBroker(t)
	for _, queue := range []string{q, "never-used"} {
		cs, err := b.Claim(ctx, queue, "w", 5, ttl)
		require.NoError(t, err)
		require.NotNil(t, cs)
		assert.Empty(t, cs)
	}
	enqueue(t, b, q, "later", claim.Delay(time.Minute))
	cs, err := b.Claim(ctx, q, "w", 5, ttl)
	require.NoError(t, err)
	assert.Empty(t, cs)
}

func TestDelayedItemBecomesVisibleExactlyAtItsTime(t *testing.T) {
	b, _, clk := newBroker(t)
	it := enqueue(t, b, q, "p", claim.Delay(10*time.Second))
	assert.Equal(t, claim.Delayed, it.State)
	assert.Equal(t, t0.Add(10*time.Second), it.VisibleAt)
	assert.Equal(t, counts(0, 1, 0, 0), countsOf(t, b, q))

	clk.Advance(10*time.Second - 1)
	assert.Equal(t, counts(0, 1, 0, 0), countsOf(t, b, q))
	clk.Advance(1)
	assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q))
	claimOne(t, b, q, "w")
}

func TestCompleteRemovesTheItemForGood(t *testing.T) {
	b, svc, clk := newBroker(t)
	it := enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w")
	require.NoError(t, b.Complete(ctx, c))

	assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
	_, ok := lookup(t, b, it.ID)
	assert.False(t, ok)
	// The lease is revoked, not left to expire.
	_, err := svc.Info(ctx, lease.ID(c.Ref.Token))
	require.ErrorIs(t, err, lease.ErrAlreadyRevoked)
	clk.Advance(time.Hour)
	assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
}

func TestHeartbeatExtendsALiveClaim(t *testing.T) {
	b, svc, clk := newBroker(t)
	enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w")

	clk.Advance(20 * time.Second)
	c2, err := b.Heartbeat(ctx, c, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, t0.Add(20*time.Second+time.Minute), c2.ExpiresAt)
	assert.Equal(t, c.Ref, c2.Ref)
	l, err := svc.Info(ctx, lease.ID(c.Ref.Token))
	require.NoError(t, err)
	assert.Equal(t, time.Minute, l.TTL)

	// Past the first expiry, the claim holds.
	clk.Advance(time.Minute - 1)
	assert.Equal(t, counts(0, 0, 1, 0), countsOf(t, b, q))
	require.NoError(t, b.Complete(ctx, c))
}

func TestExpiredClaimRequeuesAtOnceAndCountsTheAttempt(t *testing.T) {
	b, _, clk := newBroker(t)
	it := enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w1")

	clk.Advance(ttl - 1)
	assert.Equal(t, counts(0, 0, 1, 0), countsOf(t, b, q))
	clk.Advance(1)
	assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q), "visible as soon as the lease expired")

	got, ok := lookup(t, b, it.ID)
	require.True(t, ok)
	assert.Equal(t, claim.Visible, got.State)
	assert.Equal(t, c.ExpiresAt, got.VisibleAt)
	assert.Equal(t, []claim.Failure{{Attempt: 1, Owner: "w1", At: c.ExpiresAt, Reason: "lease expired", Lost: true}}, got.History)

	c2 := claimOne(t, b, q, "w2")
	assert.Equal(t, 2, c2.Attempt)
}

func TestStaleClaimIsRejectedAndChangesNothing(t *testing.T) {
	b, _, clk := newBroker(t)
	it := enqueue(t, b, q, "p")
	old := claimOne(t, b, q, "w1")
	clk.Advance(ttl)

	check := func(t *testing.T, want claim.Counts) {
		t.Helper()
		_, err := b.Heartbeat(ctx, old, ttl)
		requireStale(t, err)
		requireStale(t, b.Complete(ctx, old))
		_, err = b.Fail(ctx, old, "boom", time.Second, time.Minute)
		requireStale(t, err)
		assert.Equal(t, want, countsOf(t, b, q))
	}
	t.Run("before anyone claims again", func(t *testing.T) { check(t, counts(1, 0, 0, 0)) })

	cur := claimOne(t, b, q, "w2")
	t.Run("after another owner claimed", func(t *testing.T) { check(t, counts(0, 0, 1, 0)) })

	got, _ := lookup(t, b, it.ID)
	assert.Len(t, got.History, 1, "stale calls add no history")
	_, err := b.Heartbeat(ctx, cur, ttl)
	require.NoError(t, err, "the current claim is unaffected")
	require.NoError(t, b.Complete(ctx, cur))
}

func TestClaimExpiresAtExactlyItsExpiresAt(t *testing.T) {
	b, _, clk := newBroker(t)
	enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w")
	clk.Advance(ttl - 1)
	c, err := b.Heartbeat(ctx, c, ttl)
	require.NoError(t, err)
	clk.Advance(ttl)
	_, err = b.Heartbeat(ctx, c, ttl)
	requireStale(t, err)
}

func TestSettledClaimIsStale(t *testing.T) {
	tests := []struct {
		name   string
		settle func(*claim.Broker, claim.Claim) error
	}{
		{"completed", func(b *claim.Broker, c claim.Claim) error { return b.Complete(ctx, c) }},
		{"failed", func(b *claim.Broker, c claim.Claim) error {
			_, err := b.Fail(ctx, c, "x", time.Second, time.Second)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _, _ := newBroker(t)
			enqueue(t, b, q, "p")
			c := claimOne(t, b, q, "w")
			require.NoError(t, tt.settle(b, c))
			before := countsOf(t, b, q)
			_, err := b.Heartbeat(ctx, c, ttl)
			requireStale(t, err)
			requireStale(t, b.Complete(ctx, c))
			_, err = b.Fail(ctx, c, "again", time.Second, time.Second)
			requireStale(t, err)
			assert.Equal(t, before, countsOf(t, b, q))
		})
	}
}

func TestRevokedClaimLeaseRequeuesTheItem(t *testing.T) {
	b, svc, _ := newBroker(t)
	it := enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w")
	_, err := svc.Revoke(ctx, lease.ID(c.Ref.Token))
	require.NoError(t, err)

	assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q))
	got, _ := lookup(t, b, it.ID)
	require.Len(t, got.History, 1)
	assert.Equal(t, "lease revoked", got.History[0].Reason)
	requireStale(t, b.Complete(ctx, c))
}

func TestLostClaimOnLastAttemptDeadLetters(t *testing.T) {
	b, _, clk := newBroker(t, claim.WithMaxAttempts(2))
	it := enqueue(t, b, q, "p")
	claimOne(t, b, q, "w")
	clk.Advance(ttl)
	c := claimOne(t, b, q, "w")
	assert.Equal(t, 2, c.Attempt)
	clk.Advance(ttl)

	assert.Equal(t, counts(0, 0, 0, 1), countsOf(t, b, q))
	dead := listDead(t, b, q)
	require.Len(t, dead, 1)
	assert.Equal(t, it.ID, dead[0].ID)
	assert.Equal(t, claim.Dead, dead[0].State)
	assert.Equal(t, c.ExpiresAt, dead[0].DeadAt)
	assert.Len(t, dead[0].History, 2)
}

func TestFailRequeuesWithBackoff(t *testing.T) {
	const base, maxDelay = time.Second, 10 * time.Second
	b, _, clk := newBroker(t)
	it := enqueue(t, b, q, "p")
	// attempt -> delay: 1s, 2s, 4s, 8s, then capped at 10s.
	for attempt, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, maxDelay, maxDelay} {
		c := claimOne(t, b, q, "w")
		require.Equal(t, attempt+1, c.Attempt)
		out, err := b.Fail(ctx, c, "boom", base, maxDelay)
		require.NoError(t, err)
		require.Equal(t, claim.Requeued, out)
		got, _ := lookup(t, b, it.ID)
		require.Equal(t, claim.Delayed, got.State)
		require.Equal(t, clk.Now().Add(want), got.VisibleAt, "attempt %d", attempt+1)

		clk.Advance(want - 1)
		require.Equal(t, counts(0, 1, 0, 0), countsOf(t, b, q))
		clk.Advance(1)
		require.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q))
	}
}

func TestFailOnLastAttemptDeadLettersWithHistory(t *testing.T) {
	b, _, clk := newBroker(t)
	it := enqueue(t, b, q, "p", claim.MaxAttempts(3))
	var reasons []string
	for i := range 3 {
		c := claimOne(t, b, q, "w")
		reason := "failure " + string(rune('a'+i))
		reasons = append(reasons, reason)
		out, err := b.Fail(ctx, c, reason, time.Second, time.Second)
		require.NoError(t, err)
		if i < 2 {
			require.Equal(t, claim.Requeued, out)
			clk.Advance(time.Second)
		} else {
			require.Equal(t, claim.DeadLettered, out)
		}
	}
	assert.Equal(t, counts(0, 0, 0, 1), countsOf(t, b, q))
	got, _ := lookup(t, b, it.ID)
	assert.Equal(t, claim.Dead, got.State)
	assert.Equal(t, 3, got.Attempts)
	var seen []string
	for i, f := range got.History {
		assert.Equal(t, i+1, f.Attempt)
		assert.False(t, f.Lost)
		seen = append(seen, f.Reason)
	}
	assert.Equal(t, reasons, seen)
}

func TestDefaultMaxAttemptsIs25(t *testing.T) {
	b, _, _ := newBroker(t)
	it := enqueue(t, b, q, "p")
	assert.Equal(t, claim.DefaultMaxAttempts, it.MaxAttempts)
	assert.Equal(t, 25, it.MaxAttempts)
}

func TestJitterIsAppliedAndClamped(t *testing.T) {
	tests := []struct {
		name   string
		jitter func(time.Duration) time.Duration
		want   time.Duration
	}{
		{"halved", func(d time.Duration) time.Duration { return d / 2 }, 2 * time.Second},
		{"negative is zero", func(time.Duration) time.Duration { return -time.Hour }, 0},
		{"capped at max delay", func(time.Duration) time.Duration { return time.Hour }, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []time.Duration
			b, _, clk := newBroker(t, claim.WithJitter(func(d time.Duration) time.Duration {
				got = append(got, d)
				return tt.jitter(d)
			}))
			it := enqueue(t, b, q, "p")
			c := claimOne(t, b, q, "w")
			_, err := b.Fail(ctx, c, "x", 4*time.Second, time.Minute)
			require.NoError(t, err)
			assert.Equal(t, []time.Duration{4 * time.Second}, got)
			item, _ := lookup(t, b, it.ID)
			assert.Equal(t, clk.Now().Add(tt.want), item.VisibleAt)
		})
	}
}

func TestIdempotencyKey(t *testing.T) {
	b, _, clk := newBroker(t, claim.WithMaxAttempts(1))
	a := enqueue(t, b, q, "one", claim.Key("k"))
	again := enqueue(t, b, q, "two", claim.Key("k"), claim.Delay(time.Hour))
	assert.Equal(t, a.ID, again.ID)
	assert.Equal(t, []byte("one"), again.Payload)
	assert.Equal(t, "k", again.Key)
	assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q))

	other := enqueue(t, b, "other", "one", claim.Key("k"))
	assert.NotEqual(t, a.ID, other.ID, "keys are per queue")

	// Claimed and dead items keep their key.
	claimOne(t, b, q, "w")
	assert.Equal(t, a.ID, enqueue(t, b, q, "x", claim.Key("k")).ID)
	clk.Advance(ttl)
	require.Equal(t, counts(0, 0, 0, 1), countsOf(t, b, q))
	assert.Equal(t, a.ID, enqueue(t, b, q, "x", claim.Key("k")).ID)

	// Deleting (like completing) frees it.
	require.NoError(t, b.DeleteDead(ctx, q, a.ID))
	fresh := enqueue(t, b, q, "three", claim.Key("k"))
	assert.NotEqual(t, a.ID, fresh.ID)
	c := claimOne(t, b, q, "w")
	require.NoError(t, b.Complete(ctx, c))
	assert.NotEqual(t, fresh.ID, enqueue(t, b, q, "four", claim.Key("k")).ID)
}

func TestRequeueAndDeleteDeadLetters(t *testing.T) {
	b, _, clk := newBroker(t, claim.WithMaxAttempts(1))
	first := enqueue(t, b, q, "a")
	second := enqueue(t, b, q, "b")
	c1 := claimOne(t, b, q, "w")
	clk.Advance(time.Second)
	c2 := claimOne(t, b, q, "w")
	_, err := b.Fail(ctx, c2, "bad input", time.Second, time.Second)
	require.NoError(t, err)
	clk.Advance(ttl)

	dead := listDead(t, b, q)
	require.Len(t, dead, 2)
	assert.Equal(t, first.ID, dead[0].ID, "in ID order")
	assert.Equal(t, second.ID, dead[1].ID)
	assert.Equal(t, "bad input", dead[1].History[0].Reason)
	assert.Equal(t, c1.ExpiresAt, dead[0].DeadAt)
	assert.Empty(t, listDead(t, b, "other"))

	it, err := b.RequeueDead(ctx, q, first.ID)
	require.NoError(t, err)
	assert.Equal(t, claim.Visible, it.State)
	assert.Equal(t, 0, it.Attempts)
	assert.Len(t, it.History, 1, "history kept")
	assert.Equal(t, counts(1, 0, 0, 1), countsOf(t, b, q))
	c := claimOne(t, b, q, "w")
	assert.Equal(t, first.ID, c.Item)
	assert.Equal(t, 1, c.Attempt)

	require.NoError(t, b.DeleteDead(ctx, q, second.ID))
	assert.Equal(t, counts(0, 0, 1, 0), countsOf(t, b, q))
	_, ok := lookup(t, b, second.ID)
	assert.False(t, ok)

	for _, tc := range []struct {
		name  string
		queue string
		id    claim.ItemID
	}{
		{"deleted", q, second.ID},
		{"claimed, not dead", q, first.ID},
		{"never existed", q, 999},
		{"other queue", "other", first.ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.RequeueDead(ctx, tc.queue, tc.id)
			require.ErrorIs(t, err, claim.ErrNotFound)
			var nf *claim.NotFoundError
			require.ErrorAs(t, err, &nf)
			assert.Equal(t, tc.id, nf.Item)
			require.ErrorIs(t, b.DeleteDead(ctx, tc.queue, tc.id), claim.ErrNotFound)
			assert.Equal(t, counts(0, 0, 1, 0), countsOf(t, b, q))
		})
	}
}

func TestClaimRespectsServiceTTLBoundsAndChangesNothing(t *testing.T) {
	b, svc := newBoundedBroker(t)
	it := enqueue(t, b, q, "p")
	_, err := b.Claim(ctx, q, "w", 1, time.Hour)
	le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "ttl", le.Field)
	assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q))
	got, _ := lookup(t, b, it.ID)
	assert.Equal(t, 0, got.Attempts)
	assert.Zero(t, svc.ActiveCount())

	c := claimOne(t, b, q, "w")
	_, err = b.Heartbeat(ctx, c, time.Hour)
	le = requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "ttl", le.Field)
	assert.Equal(t, counts(0, 0, 1, 0), countsOf(t, b, q))
	_, err = b.Heartbeat(ctx, c, time.Minute)
	require.NoError(t, err, "the claim is unaffected")
}

func newBoundedBroker(t *testing.T) (*claim.Broker, *lease.Service) {
	t.Helper()
	svc := lease.Must(lease.New(lease.WithClock(leasetest.NewFakeClock(t0)), lease.WithTTLBounds(time.Second, time.Minute)))
	b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, svc.Close())
	})
	return b, svc
}

func TestClosed(t *testing.T) {
	b, svc, _ := newBroker(t)
	enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w")
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "idempotent")

	_, err := b.Enqueue(ctx, q, nil)
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
	_, err = b.Claim(ctx, q, "w", 1, ttl)
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
	_, err = b.Heartbeat(ctx, c, ttl)
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
	requireCode(t, b.Complete(ctx, c), lease.CodeClosed, lease.ErrClosed)
	_, err = b.Fail(ctx, c, "x", time.Second, time.Second)
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
	_, err = b.RequeueDead(ctx, q, 1)
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
	_, err = b.Counts(ctx, q)
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
	_, err = b.List(ctx, claim.Query{Queue: q, Limit: 1})
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
	_, err = b.Lookup(ctx, 1)
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
	requireCode(t, b.Cancel(ctx, q, 1), lease.CodeClosed, lease.ErrClosed)
	requireCode(t, b.Snooze(ctx, c, 0), lease.CodeClosed, lease.ErrClosed)
	_, err = svc.Info(ctx, lease.ID(c.Ref.Token))
	require.NoError(t, err, "the claim's lease is left to expire")
}

func TestClosedServiceFailsClaimAndKeepsItems(t *testing.T) {
	b, svc, _ := newBroker(t)
	enqueue(t, b, q, "a")
	enqueue(t, b, q, "b")
	require.NoError(t, svc.Close())
	_, err := b.Claim(ctx, q, "w", 2, ttl)
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
	assert.Equal(t, counts(2, 0, 0, 0), countsOf(t, b, q))
}

func TestCancelledContext(t *testing.T) {
	b, _, _ := newBroker(t)
	enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w")
	enqueue(t, b, q, "p2")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := b.Enqueue(cctx, q, nil)
	require.ErrorIs(t, err, context.Canceled)
	_, err = b.Claim(cctx, q, "w", 1, ttl)
	require.ErrorIs(t, err, context.Canceled)
	_, err = b.Heartbeat(cctx, c, ttl)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, b.Complete(cctx, c), context.Canceled)
	assert.Equal(t, counts(1, 0, 1, 0), countsOf(t, b, q))
	require.NoError(t, b.Complete(ctx, c), "the claim is still live")
}

func TestClaimOfAnotherBroker(t *testing.T) {
	b1, _, _ := newBroker(t)
	b2, _, _ := newBroker(t)
	enqueue(t, b1, q, "p")
	enqueue(t, b2, q, "p")
	c := claimOne(t, b1, q, "w")
	// A Ref is an item and a token, values any store can be handed: the
	// other Broker's item 1 has no claim with that token, so it is stale.
	requireCode(t, b2.Complete(ctx, c), lease.CodeStaleUse, lease.ErrStaleUse)
	assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b2, q))
}

func TestStateAndOutcomeStrings(t *testing.T) {
	assert.Equal(t, "visible", claim.Visible.String())
	assert.Equal(t, "delayed", claim.Delayed.String())
	assert.Equal(t, "claimed", claim.Claimed.String())
	assert.Equal(t, "dead", claim.Dead.String())
	assert.Equal(t, "State(9)", claim.State(9).String())
	assert.Equal(t, "requeued", claim.Requeued.String())
	assert.Equal(t, "dead_lettered", claim.DeadLettered.String())
	assert.Equal(t, "Outcome(0)", claim.Outcome(0).String())
}

func TestHugeDelaySaturatesInsteadOfOverflowing(t *testing.T) {
	b, _, clk := newBroker(t)
	it := enqueue(t, b, q, "p", claim.Delay(time.Duration(math.MaxInt64)))
	assert.Equal(t, claim.Delayed, it.State)
	assert.True(t, it.VisibleAt.After(t0.Add(100*365*24*time.Hour)))
	clk.Advance(1000 * time.Hour)
	assert.Equal(t, counts(0, 1, 0, 0), countsOf(t, b, q))
}

func TestNotFoundErrorMessage(t *testing.T) {
	b, _, _ := newBroker(t)
	err := b.DeleteDead(ctx, q, 7)
	assert.EqualError(t, err, `claim: delete_dead queue "jobs" item 7: no such dead letter [LS_NOT_FOUND]`)
}
