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

// hookRecorder is an error hook that keeps what it is told, with the
// item's state as the hook saw it.
type hookRecorder struct {
	b        *claim.Broker
	mu       sync.Mutex
	failures []claim.HandlerFailure
	states   []claim.State // the item's state when the hook ran
}

func (h *hookRecorder) hook(ctx context.Context, f claim.HandlerFailure) {
	it, err := h.b.Lookup(ctx, f.Claim.Item) // calls the Broker: no lock is held
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures = append(h.failures, f)
	if err == nil {
		h.states = append(h.states, it.State)
	}
}

func TestErrorHookSeesEveryFailureAfterItsSettlement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &hookRecorder{}
		b, _ := newRealBroker(t, claim.WithErrorHook(rec.hook), lease.WithPanicHandler(func(*lease.PanicError) {}))
		rec.b = b
		errDown := errors.New("database down")
		snoozed := false
		stop := startWork(t, b, claim.Worker{Queue: q, Handler: func(_ context.Context, c claim.Claim) error {
			switch string(c.Payload) {
			case "fail":
				return errDown
			case "panic":
				panic("boom")
			case "discard":
				return claim.Discard(errDown)
			case "snooze":
				if !snoozed {
					snoozed = true
					return claim.Snooze(0)
				}
			}
			return nil
		}})
		failing := enqueue(t, b, q, "fail", claim.MaxAttempts(2))
		panicking := enqueue(t, b, q, "panic", claim.MaxAttempts(3))
		discarded := enqueue(t, b, q, "discard", claim.MaxAttempts(3))
		enqueue(t, b, q, "snooze")
		enqueue(t, b, q, "ok")
		<-time.After(time.Minute) // every backoff has passed
		synctest.Wait()
		require.NoError(t, stop())

		type seen struct {
			item     claim.ItemID
			attempt  int
			outcome  claim.Outcome
			state    claim.State
			panicked bool
			err      string
		}
		var got []seen
		for i, f := range rec.failures {
			assert.Equal(t, f.Attempt, f.Claim.Attempt)
			got = append(got, seen{f.Claim.Item, f.Attempt, f.Outcome, rec.states[i], f.Panicked, f.Err.Error()})
			if f.Panicked {
				assert.Equal(t, "boom", f.Panic)
			} else {
				assert.Nil(t, f.Panic)
			}
		}
		assert.ElementsMatch(t, []seen{
			{failing.ID, 1, claim.Requeued, claim.Delayed, false, "database down"},
			{failing.ID, 2, claim.DeadLettered, claim.Dead, false, "database down"},
			{panicking.ID, 1, claim.Requeued, claim.Delayed, true, "panic: boom"},
			{panicking.ID, 2, claim.Requeued, claim.Delayed, true, "panic: boom"},
			{panicking.ID, 3, claim.DeadLettered, claim.Dead, true, "panic: boom"},
			{discarded.ID, 1, claim.DeadLettered, claim.Dead, false, "claim: discarded: database down"},
		}, got, "not for success nor for a snooze")
		assert.Equal(t, counts(0, 0, 0, 3), countsOf(t, b, q))
	})
}

func TestErrorHookThatPanicsFollowsThePanicPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu     sync.Mutex
			panics []*lease.PanicError
		)
		b, _ := newRealBroker(t,
			claim.WithErrorHook(func(context.Context, claim.HandlerFailure) { panic("hook broke") }),
			lease.WithPanicHandler(func(p *lease.PanicError) {
				mu.Lock()
				defer mu.Unlock()
				panics = append(panics, p)
			}))
		handled := 0
		stop := startWork(t, b, claim.Worker{Queue: q, Handler: func(_ context.Context, c claim.Claim) error {
			handled++
			if string(c.Payload) == "bad" {
				return claim.Discard(nil)
			}
			return nil
		}})
		enqueue(t, b, q, "bad")
		enqueue(t, b, q, "good")
		synctest.Wait()
		require.NoError(t, stop())
		assert.Equal(t, 2, handled, "work went on after the hook panicked")
		require.Len(t, panics, 1)
		assert.Equal(t, "error hook", panics[0].Callback)
		assert.Equal(t, "hook broke", panics[0].Value)
		assert.Equal(t, counts(0, 0, 0, 1), countsOf(t, b, q))
	})
}
