package claim_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// scribble overwrites what a caller might edit in an Item it was given.
func scribble(it *claim.Item) {
	for i := range it.Payload {
		it.Payload[i] = 'X'
	}
	for i := range it.History {
		it.History[i].Reason = "edited"
	}
	it.History = append(it.History, claim.Failure{Reason: "appended"})
}

// TestResultsAreCopies: editing anything a call returned (payloads,
// histories, dead letters) changes nothing that a later call returns.
func TestResultsAreCopies(t *testing.T) {
	b, _, clk := newBroker(t, claim.WithMaxAttempts(2))
	payload := []byte("payload")
	it, err := b.Enqueue(ctx, q, payload, claim.Key("k"))
	require.NoError(t, err)
	payload[0] = 'X'
	scribble(&it)
	again := enqueue(t, b, q, "other", claim.Key("k"))
	assert.Equal(t, []byte("payload"), again.Payload, "Enqueue's payload and result are copies")
	scribble(&again)

	c := claimOne(t, b, q, "w")
	assert.Equal(t, []byte("payload"), c.Payload)
	c.Payload[0] = 'X'
	_, err = b.Fail(ctx, c, "first", time.Second, time.Second)
	require.NoError(t, err)
	got, _ := lookup(t, b, it.ID)
	assert.Equal(t, []byte("payload"), got.Payload, "Claim's payload is a copy")
	scribble(&got)
	got, _ = lookup(t, b, it.ID)
	assert.Equal(t, []byte("payload"), got.Payload, "Lookup's result is a copy")
	require.Len(t, got.History, 1)
	assert.Equal(t, "first", got.History[0].Reason)

	clk.Advance(time.Second)
	c = claimOne(t, b, q, "w")
	hb, err := b.Heartbeat(ctx, c, ttl)
	require.NoError(t, err)
	hb.Payload[0] = 'X'
	_, err = b.Fail(ctx, c, "second", time.Second, time.Second)
	require.NoError(t, err)
	dead := listDead(t, b, q)
	require.Len(t, dead, 1)
	scribble(&dead[0])
	dead = listDead(t, b, q)
	require.Len(t, dead, 1)
	assert.Equal(t, []byte("payload"), dead[0].Payload, "List's results are copies")
	assert.Equal(t, []string{"first", "second"}, []string{dead[0].History[0].Reason, dead[0].History[1].Reason})
	assert.Len(t, dead[0].History, 2)

	requeued, err := b.RequeueDead(ctx, q, it.ID)
	require.NoError(t, err)
	scribble(&requeued)
	got, _ = lookup(t, b, it.ID)
	assert.Equal(t, []byte("payload"), got.Payload, "RequeueDead's result is a copy")
	assert.Len(t, got.History, 2)
}

// TestHandlerEditingItsClaimChangesNothing: a handler that scribbles on
// its claim's payload and fails sees the original on the next attempt.
func TestHandlerEditingItsClaimChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		seen := make(chan string, 2)
		stop := startWork(t, b, claim.Worker{Queue: q, BaseDelay: time.Second, Handler: func(_ context.Context, c claim.Claim) error {
			seen <- string(c.Payload)
			if c.Attempt == 1 {
				copy(c.Payload, "XXXX")
				return errors.New("again")
			}
			return nil
		}})
		enqueue(t, b, q, "data")
		<-time.After(time.Minute)
		synctest.Wait()
		require.NoError(t, stop())
		assert.Equal(t, "data", <-seen)
		assert.Equal(t, "data", <-seen)
	})
}
