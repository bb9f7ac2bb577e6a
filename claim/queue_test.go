package claim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

var bg = context.Background()

// newQueueBroker returns a Broker on a fake clock, and a function counting
// its queue states once the retired ones are freed, as the next sweep would.
func newQueueBroker(t *testing.T, opts ...Option) (*Broker, *leasetest.FakeClock, func() int) {
	clk := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := lease.Must(lease.New(lease.WithClock(clk)))
	m := lease.Must(NewMemory(svc))
	b := lease.Must(New(m, opts...))
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, svc.Close())
	})
	return b, clk, func() int {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.freeRetired()
		return len(m.queues.m)
	}
}

// TestQueueStateIsFreedWhenUnused: a queue's state exists while it has
// items in any state or a waiting worker, and not after.
func TestQueueStateIsFreedWhenUnused(t *testing.T) {
	b, clk, queues := newQueueBroker(t, WithMaxAttempts(1))

	_, err := b.Enqueue(bg, "t1", nil, Delay(time.Second))
	require.NoError(t, err)
	_, err = b.Enqueue(bg, "t2", nil, Key("k"))
	require.NoError(t, err)
	assert.Equal(t, 2, queues())
	clk.Advance(time.Second)
	for _, q := range []string{"t1", "t2"} {
		cs, err := b.Claim(bg, q, "w", 1, time.Minute)
		require.NoError(t, err)
		require.Len(t, cs, 1)
		if q == "t1" {
			require.NoError(t, b.Complete(bg, cs[0]))
			continue
		}
		_, err = b.Fail(bg, cs[0], "x", time.Second, time.Second)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, queues(), "t1 is empty; t2 holds a dead letter")
	dead, err := b.List(bg, Query{Queue: "t2", State: Dead, Limit: 10})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.NoError(t, b.DeleteDead(bg, "t2", dead[0].ID))
	assert.Zero(t, queues())
	it, err := b.Enqueue(bg, "t2", nil, Key("k"))
	require.NoError(t, err)
	assert.NotEqual(t, dead[0].ID, it.ID, "the key went with the item")
}

// TestWorkerWaitingOnAFreedQueueStillWakes: a worker waiting on a queue
// keeps its state alive, so an item enqueued after the queue drained (and
// its retired state was swept) wakes it; once no worker waits, the state is
// freed.
func TestWorkerWaitingOnAFreedQueueStillWakes(t *testing.T) {
	b, _, queues := newQueueBroker(t)
	handled := make(chan string)
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() {
		done <- b.Work(ctx, Worker{Queue: "tenant", Handler: func(_ context.Context, c Claim) error {
			handled <- string(c.Payload)
			return nil
		}})
	}()
	for _, p := range []string{"first", "second"} {
		assert.LessOrEqual(t, queues(), 1)
		_, err := b.Enqueue(bg, "tenant", []byte(p))
		require.NoError(t, err)
		select {
		case got := <-handled:
			assert.Equal(t, p, got)
		case <-time.After(10 * time.Second):
			require.FailNow(t, "the waiting worker did not wake")
		}
	}
	cancel()
	require.NoError(t, <-done)
	assert.Zero(t, queues(), "freed once the worker stopped waiting")
}

// cancelledOnCheck is a context that is cancelled by its first Err call,
// which still answers nil: ctx is done just after the caller checked it.
type cancelledOnCheck struct {
	context.Context
	cancel  context.CancelFunc
	checked bool
}

func (c *cancelledOnCheck) Err() error {
	if !c.checked {
		c.checked = true
		c.cancel()
		return nil
	}
	return c.Context.Err()
}

// TestWorkerStoppedRightAfterItsClaimStillEndsItsWait: ctx is done
// between the fetcher's first look at ctx and its claim, after it asked to
// be notified, which counts it as waiting. The wait must still be ended,
// or the queue is never freed.
func TestWorkerStoppedRightAfterItsClaimStillEndsItsWait(t *testing.T) {
	b, _, queues := newQueueBroker(t)
	w, err := Worker{Queue: "tenant", Handler: func(context.Context, Claim) error { return nil }}.withDefaults()
	require.NoError(t, err)
	inner, cancel := context.WithCancel(bg)
	defer cancel()
	require.NoError(t, newRun(b, inner, w).work(&cancelledOnCheck{Context: inner, cancel: cancel}))
	assert.Zero(t, queues(), "the worker's wait ended")
}

// TestLeaseExpiredBeforeItWasRecordedIsTakenBackAtOnce: the claim's lease
// expires while Claim is granting it (the service's audit sink, which runs
// inside the grant, moves the clock past its TTL), so its ending reaches
// the Broker before the claim is recorded. Claim takes the item back before
// it returns, as the ending would have: the item is visible again, and a
// waiting worker would have been woken, without any later call settling.
func TestLeaseExpiredBeforeItWasRecordedIsTakenBackAtOnce(t *testing.T) {
	clk := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var once bool
	svc := lease.Must(lease.New(lease.WithClock(clk), lease.WithAuditObserver(lease.ObserverFunc[lease.Decision](func(d lease.Decision) {
		if d.Action == lease.ActionGrant && !once {
			once = true
			clk.Advance(time.Second)
		}
	}))))
	m := lease.Must(NewMemory(svc))
	b := lease.Must(New(m))
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, svc.Close())
	})
	it, err := b.Enqueue(bg, "q", nil)
	require.NoError(t, err)
	cs, err := b.Claim(bg, "q", "w", 1, time.Second)
	require.NoError(t, err)
	require.Len(t, cs, 1)

	m.mu.Lock() // look without settling, as no later call has
	rec := m.lookup(it.ID)
	state, history := rec.state, append([]Failure(nil), rec.history...)
	m.mu.Unlock()
	assert.Equal(t, Visible, state, "taken back by Claim itself")
	require.Len(t, history, 1)
	assert.Equal(t, "lease expired", history[0].Reason)
	require.ErrorIs(t, b.Complete(bg, cs[0]), lease.ErrStaleUse)
}
