package claim_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

func TestWorkHandlerPanicIsReportedAndFailsTheItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p leasetest.PanicRecorder
		b, svc := newRealBroker(t, claim.WithMaxAttempts(1), lease.WithPanicHandler(p.Handle))
		stop := startWork(t, b, claim.Worker{Queue: q, Handler: func(_ context.Context, c claim.Claim) error {
			if string(c.Payload) == "panic" {
				panic("kaboom")
			}
			return nil
		}})
		it := enqueue(t, b, q, "panic")
		enqueue(t, b, q, "fine")
		synctest.Wait()
		require.NoError(t, stop(), "the worker kept going")

		assert.Equal(t, counts(0, 0, 0, 1), countsOf(t, b, q), "the other item was completed")
		dead := listDead(t, b, q)
		require.Len(t, dead, 1)
		assert.Equal(t, it.ID, dead[0].ID)
		assert.Equal(t, "panic: kaboom", dead[0].History[0].Reason)
		assert.Zero(t, svc.ActiveCount())

		got := p.Panics()
		require.Len(t, got, 1)
		assert.Equal(t, "work handler", got[0].Callback)
		assert.Equal(t, "kaboom", got[0].Value)
		assert.Contains(t, string(got[0].Stack), "panic_test.go", "the stack of the panicking handler")
	})
}

// TestJitterIsCalledOutsideTheLock: a jitter function may call the Broker.
// Called under the Broker's lock, the call below would wait for that lock
// forever; the guard turns the wait into a failure instead of a hang.
func TestJitterIsCalledOutsideTheLock(t *testing.T) {
	var (
		b         *claim.Broker
		underLock bool
		counted   = make(chan claim.Counts, 1)
	)
	b, _, clk := newBroker(t, claim.WithJitter(func(d time.Duration) time.Duration {
		go func() { counted <- countsOf(t, b, q) }()
		select {
		case c := <-counted:
			assert.Equal(t, counts(0, 0, 1, 0), c, "the claim is still live while the delay is computed")
			counted <- c
		case <-time.After(5 * time.Second):
			underLock = true // the call completes once Fail releases the lock
		}
		return d / 2
	}))
	it := enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w")
	out, err := b.Fail(ctx, c, "x", 4*time.Second, time.Minute)
	<-counted
	require.NoError(t, err)
	assert.False(t, underLock, "the jitter function ran under the Broker's lock")
	assert.Equal(t, claim.Requeued, out)
	got, _ := lookup(t, b, it.ID)
	assert.Equal(t, clk.Now().Add(2*time.Second), got.VisibleAt)
}

// TestPanickingJitterIsReportedAndTheBackoffUsed: the panic is reported,
// the item is requeued after the backoff without jitter, and the Broker
// carries on.
func TestPanickingJitterIsReportedAndTheBackoffUsed(t *testing.T) {
	var p leasetest.PanicRecorder
	b, _, clk := newBroker(t, lease.WithPanicHandler(p.Handle), claim.WithJitter(func(time.Duration) time.Duration {
		panic("bad jitter")
	}))
	it := enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w")
	var (
		out claim.Outcome
		err error
	)
	require.NotPanics(t, func() { out, err = b.Fail(ctx, c, "x", 4*time.Second, time.Minute) })
	require.NoError(t, err)
	assert.Equal(t, claim.Requeued, out)
	got, _ := lookup(t, b, it.ID)
	assert.Equal(t, claim.Delayed, got.State)
	assert.Equal(t, clk.Now().Add(4*time.Second), got.VisibleAt)
	reported := p.Panics()
	require.Len(t, reported, 1)
	assert.Equal(t, "jitter", reported[0].Callback)
	assert.Equal(t, "bad jitter", reported[0].Value)

	clk.Advance(4 * time.Second)
	c = claimOne(t, b, q, "w")
	require.NoError(t, b.Complete(ctx, c), "the Broker carries on")
}
