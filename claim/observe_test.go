package claim_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// recorder is an Observer and a HandlerTracer that records what it is told.
type recorder struct {
	mu     sync.Mutex
	events []claim.Event
	traced []error
}

type tracedKey struct{}

func (r *recorder) Observe(e claim.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) TraceHandler(ctx context.Context, c claim.Claim) (context.Context, func(error)) {
	return context.WithValue(ctx, tracedKey{}, c.Item), func(err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.traced = append(r.traced, err)
	}
}

func (r *recorder) all() []claim.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]claim.Event(nil), r.events...)
}

func TestObserverSeesSettlements(t *testing.T) {
	rec := &recorder{}
	b, _, clk := newBroker(t, claim.WithObserver(rec))
	first := enqueue(t, b, q, "a")
	enqueue(t, b, q, "b", claim.MaxAttempts(1))
	enqueue(t, b, q, "c")
	last := enqueue(t, b, q, "d")
	clk.Advance(2 * time.Second)

	a := claimOne(t, b, q, "w1")
	require.NoError(t, b.Complete(ctx, a))
	bb := claimOne(t, b, q, "w1")
	out, err := b.Fail(ctx, bb, "broken", time.Second, time.Second)
	require.NoError(t, err)
	require.Equal(t, claim.DeadLettered, out)
	c := claimOne(t, b, q, "w1")
	require.NoError(t, b.Snooze(ctx, c, time.Second))
	require.NoError(t, b.Cancel(ctx, q, last.ID))
	requireStale(t, b.Complete(ctx, a)) // a failed call is not an event
	clk.Advance(time.Second)
	c = claimOne(t, b, q, "w2") // the snoozed item: snoozing spends no attempt
	out, err = b.Fail(ctx, c, "again", time.Second, time.Second)
	require.NoError(t, err)
	require.Equal(t, claim.Requeued, out)
	clk.Advance(time.Second)
	claimOne(t, b, q, "w3")

	got := rec.all()
	kinds := make([]string, len(got))
	for i, e := range got {
		kinds[i] = e.Kind.String()
	}
	assert.Equal(t, []string{"claimed", "completed", "claimed", "dead_lettered", "claimed", "snoozed",
		"cancelled", "claimed", "failed", "claimed"}, kinds)
	assert.Equal(t, claim.Event{Kind: claim.EventClaimed, Queue: q, Item: first.ID, Owner: "w1", Attempt: 1,
		Pickup: 2 * time.Second, PickupKnown: true}, got[0])
	assert.Equal(t, claim.Event{Kind: claim.EventCancelled, Queue: q, Item: last.ID}, got[6])
	assert.Equal(t, 3*time.Second, got[7].Pickup)
	assert.Equal(t, "w2", got[8].Owner)
	assert.Equal(t, 2, got[9].Attempt)
	assert.False(t, got[9].PickupKnown, "only a first attempt has a pickup latency")
}

func TestObserverTracesWorkHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		b, _ := newRealBroker(t, claim.WithObserver(rec))
		seen := make(chan any, 2)
		stop := startWork(t, b, claim.Worker{Queue: q, Owner: "w", Handler: func(ctx context.Context, c claim.Claim) error {
			seen <- ctx.Value(tracedKey{})
			<-time.After(3 * time.Second) // the bubble\'s fake time
			if string(c.Payload) == "bad" {
				return errors.New("bad payload")
			}
			return nil
		}})
		good := enqueue(t, b, q, "good")
		synctest.Wait()
		bad := enqueue(t, b, q, "bad", claim.MaxAttempts(1))
		synctest.Wait()
		<-time.After(10 * time.Second) // the bubble\'s fake time moves on
		synctest.Wait()
		require.NoError(t, stop())
		assert.Equal(t, good.ID, <-seen)
		assert.Equal(t, bad.ID, <-seen)

		var handled []claim.Event
		for _, e := range rec.all() {
			if e.Kind == claim.EventHandled {
				handled = append(handled, e)
			}
		}
		require.Len(t, handled, 2)
		assert.Equal(t, 3*time.Second, handled[0].Duration)
		assert.NoError(t, handled[0].Err)
		assert.EqualError(t, handled[1].Err, "bad payload")
		rec.mu.Lock()
		defer rec.mu.Unlock()
		require.Len(t, rec.traced, 2)
		assert.NoError(t, rec.traced[0])
	})
}

func TestObserverPanicsAreReported(t *testing.T) {
	var panics []*lease.PanicError
	b, _, _ := newBroker(t, claim.WithObserver(claim.ObserverFunc(func(claim.Event) { panic("boom") })),
		lease.WithPanicHandler(func(p *lease.PanicError) { panics = append(panics, p) }))
	enqueue(t, b, q, "a")
	c := claimOne(t, b, q, "w")
	require.NoError(t, b.Complete(ctx, c))
	require.Len(t, panics, 2)
	assert.Equal(t, "observer", panics[0].Callback)
	assert.Equal(t, "EventKind(99)", claim.EventKind(99).String())
}

// TestJoinedObservers: observers joined by lease.Observers each see every
// event, each HandlerTracer among them wraps the Work handler, and one
// that panics is reported by the Broker's panic policy as Callback
// "observer" without keeping the others from the event.
func TestJoinedObservers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var panics []*lease.PanicError
		first, second := &recorder{}, &recorder{}
		bad := lease.ObserverFunc[claim.Event](func(claim.Event) { panic("observer failed") })
		b, _ := newRealBroker(t, claim.WithObserver(lease.Observers(first, bad, second)),
			lease.WithPanicHandler(func(p *lease.PanicError) { mu.Lock(); panics = append(panics, p); mu.Unlock() }))
		seen := make(chan any, 1)
		stop := startWork(t, b, claim.Worker{Queue: q, Owner: "w", Handler: func(ctx context.Context, c claim.Claim) error {
			seen <- ctx.Value(tracedKey{})
			return nil
		}})
		item := enqueue(t, b, q, "a")
		synctest.Wait()
		require.NoError(t, stop())
		assert.Equal(t, item.ID, <-seen)

		kinds := func(r *recorder) []claim.EventKind {
			var out []claim.EventKind
			for _, e := range r.all() {
				out = append(out, e.Kind)
			}
			return out
		}
		want := []claim.EventKind{claim.EventClaimed, claim.EventHandled, claim.EventCompleted}
		assert.Equal(t, want, kinds(first))
		assert.Equal(t, want, kinds(second))
		for _, r := range []*recorder{first, second} {
			r.mu.Lock()
			assert.Equal(t, []error{nil}, r.traced, "each tracer ended its handler")
			r.mu.Unlock()
		}
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, panics, len(want))
		for _, p := range panics {
			assert.Equal(t, "observer", p.Callback)
		}
	})
}
