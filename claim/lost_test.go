package claim_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

// handlerRun is what a Work handler saw of one claim.
type handlerRun struct {
	ctx   context.Context
	claim claim.Claim
}

// blockingWork runs Work with one worker whose handler reports each run on
// runs, then, on an item's first attempt, waits for ctx to be done and for
// release to close; a later attempt (the worker claimed the item again once
// the first claim was lost) returns at once, since stopping Work no longer
// cancels a running handler before the stop timeout. It returns a function
// that stops Work and returns its error.
func blockingWork(t *testing.T, b *claim.Broker, release <-chan struct{}) (runs <-chan handlerRun, stop func() error) {
	t.Helper()
	ch := make(chan handlerRun, 4)
	stop = startWork(t, b, claim.Worker{Queue: q, LeaseDuration: ttl, Handler: func(ctx context.Context, c claim.Claim) error {
		ch <- handlerRun{ctx, c}
		if c.Attempt > 1 {
			return nil
		}
		<-ctx.Done()
		<-release
		return context.Cause(ctx)
	}})
	return ch, stop
}

// receive waits for a value, failing the test after a while instead of
// hanging.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		require.FailNow(t, "timed out")
		panic("unreachable")
	}
}

// TestLostClaimCancelsItsHandlerBeforeTheItemIsClaimedAgain: whoever gets
// the item next, the handler that held it has already been told to stop,
// with a cause that says why. The Broker cancels the handler's context in
// the same critical section in which it takes the item back.
func TestLostClaimCancelsItsHandlerBeforeTheItemIsClaimedAgain(t *testing.T) {
	tests := []struct {
		name   string
		stalls bool // the service on a stalled clock: no heartbeat, no expiry timer
		lose   func(t *testing.T, svc *lease.Service, clk *leasetest.FakeClock, c claim.Claim)
		reason string
	}{
		{"revoked", false, func(t *testing.T, svc *lease.Service, _ *leasetest.FakeClock, c claim.Claim) {
			_, err := svc.Revoke(ctx, lease.ID(c.Ref.Token))
			require.NoError(t, err)
		}, "revoked"},
		{"expired", true, func(_ *testing.T, _ *lease.Service, clk *leasetest.FakeClock, c claim.Claim) {
			clk.Set(c.ExpiresAt)
		}, "expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := leasetest.NewFakeClock(t0)
			var svcClock lease.Clock = clk
			if tt.stalls {
				svcClock = leasetest.Stalled(clk)
			}
			svc := lease.Must(lease.New(lease.WithClock(svcClock)))
			b := newBrokerOn(t, svc)
			release := make(chan struct{})
			runs, stop := blockingWork(t, b, release)
			it := enqueue(t, b, q, "p")
			first := receive(t, runs)
			require.NoError(t, first.ctx.Err(), "running")

			tt.lose(t, svc, clk, first.claim)
			second, err := b.Claim(ctx, q, "other", 1, ttl)
			require.NoError(t, err)
			require.Len(t, second, 1, "the item is claimable again")
			assert.Equal(t, it.ID, second[0].Item)
			require.Error(t, first.ctx.Err(), "the first handler was cancelled before the item could be claimed again")
			cause := context.Cause(first.ctx)
			require.ErrorIs(t, cause, lease.ErrStaleUse)
			require.ErrorIs(t, cause, claim.ErrClaimLost)
			var le *lease.Error
			require.ErrorAs(t, cause, &le)
			assert.Equal(t, lease.ID(first.claim.Ref.Token), le.LeaseID)
			assert.Contains(t, cause.Error(), tt.reason)

			close(release)
			require.NoError(t, stop())
			require.NoError(t, b.Complete(ctx, second[0]), "the worker did not settle the claim it lost")
			got, ok := lookup(t, b, it.ID)
			assert.False(t, ok, "completed by the second claimer: %+v", got)
			assert.Len(t, runs, 0, "the worker never saw the item again")
		})
	}
}

// TestLostClaimWhileAHeartbeatIsUnderWay: the lease is revoked from inside
// a heartbeat's call on the service (its audit sink), so the Broker learns
// of the loss when that heartbeat's answer comes back. The handler is
// cancelled then, as the item is taken back.
func TestLostClaimWhileAHeartbeatIsUnderWay(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	var (
		svc    *lease.Service
		target atomic.Uint64 // the lease to revoke at its next renewal
	)
	svc = lease.Must(lease.New(lease.WithClock(clk), lease.WithAuditObserver(lease.ObserverFunc[lease.Decision](func(d lease.Decision) {
		if d.Action == lease.ActionRenew && target.CompareAndSwap(uint64(d.LeaseID), 0) {
			_, _ = svc.Revoke(ctx, d.LeaseID)
		}
	}))))
	b := newBrokerOn(t, svc)
	release := make(chan struct{})
	runs, stop := blockingWork(t, b, release)
	enqueue(t, b, q, "p")
	first := receive(t, runs)
	target.Store(uint64(lease.ID(first.claim.Ref.Token)))
	clk.Advance(ttl / 3) // the heartbeat renews, then the sink revokes
	require.Error(t, first.ctx.Err())
	assert.ErrorIs(t, context.Cause(first.ctx), claim.ErrClaimLost)
	assert.Contains(t, context.Cause(first.ctx).Error(), "revoked")
	assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q))
	close(release)
	require.NoError(t, stop())
}
