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

// TestCloseStopsEverythingOfTheBroker: once Close returns, the running
// handler has been told to stop and no timer of the Broker (its delayed-item
// timer, the handler's heartbeat) is left to fire.
func TestCloseStopsEverythingOfTheBroker(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(clk)))
	b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	release := make(chan struct{})
	runs := make(chan handlerRun, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- b.Work(wctx, claim.Worker{Queue: q, LeaseDuration: ttl, Handler: func(ctx context.Context, c claim.Claim) error {
			runs <- handlerRun{ctx, c}
			<-release
			return nil
		}})
	}()
	enqueue(t, b, q, "p")
	enqueue(t, b, q, "later", claim.Delay(time.Hour))
	run := receive(t, runs)
	require.NoError(t, run.ctx.Err())

	require.NoError(t, b.Close())
	assert.Error(t, run.ctx.Err(), "the running handler was told to stop")
	assert.ErrorIs(t, context.Cause(run.ctx), lease.ErrClosed)
	require.NoError(t, svc.Close()) // stops the service's own timer
	assert.Zero(t, clk.Pending(), "no timer of the Broker is left")

	clk.Advance(time.Hour) // nothing of the Broker runs
	close(release)
	err := receive(t, done)
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
}

// TestNoHandlerStartsAfterClose closes the Broker while a worker is
// granting the lease of its next claim (from the service's audit sink,
// which runs inside that grant). The claim is never handed to the handler,
// its lease is revoked rather than left to expire, and Work returns the
// Broker's closing.
func TestNoHandlerStartsAfterClose(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	var (
		b      *claim.Broker
		closed atomic.Bool
	)
	svc := lease.Must(lease.New(lease.WithClock(clk), lease.WithAuditObserver(lease.ObserverFunc[lease.Decision](func(d lease.Decision) {
		if d.Action == lease.ActionGrant && closed.CompareAndSwap(false, true) {
			assert.NoError(t, b.Close())
		}
	}))))
	defer func() { require.NoError(t, svc.Close()) }()
	b = lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	enqueue(t, b, q, "p")
	var ran atomic.Bool
	done := make(chan error, 1)
	go func() {
		done <- b.Work(ctx, claim.Worker{Queue: q, Handler: func(context.Context, claim.Claim) error {
			ran.Store(true)
			return nil
		}})
	}()
	err := receive(t, done)
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
	assert.True(t, closed.Load())
	assert.False(t, ran.Load(), "a handler started after Close returned")
	assert.Zero(t, svc.ActiveCount(), "the claim's lease was given back")
}

// TestClaimDuringCloseIsRefused: a Claim whose grant is under way when the
// Broker closes returns the closing, not claims nobody can settle.
func TestClaimDuringCloseIsRefused(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	var b *claim.Broker
	svc := lease.Must(lease.New(lease.WithClock(clk), lease.WithAuditObserver(lease.ObserverFunc[lease.Decision](func(d lease.Decision) {
		if d.Action == lease.ActionGrant {
			assert.NoError(t, b.Close())
		}
	}))))
	defer func() { require.NoError(t, svc.Close()) }()
	b = lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	enqueue(t, b, q, "a")
	enqueue(t, b, q, "b")
	cs, err := b.Claim(ctx, q, "w", 2, ttl)
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
	assert.Empty(t, cs)
	assert.Zero(t, svc.ActiveCount(), "the leases granted were revoked")
}
