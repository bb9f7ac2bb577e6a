package claimtest

import (
	"context"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
)

// queueStore is a store that pauses and lists its queues.
type queueStore interface {
	claimstore.Pauser
	claimstore.QueueLister
}

var queueClauses = []struct {
	name string
	run  func(e *env, s queueStore)
}{
	{"PausedHandsOutNothing", testPausedHandsOutNothing},
	{"ResumeWakes", testResumeWakes},
	{"QueuesListed", testQueuesListed},
	{"QueuesBadInput", testQueuesBadInput},
}

// testPausedHandsOutNothing: a paused queue's Claim returns nothing, while
// Enqueue, live claims' settlements and other queues go on; pausing twice
// changes nothing.
func testPausedHandsOutNothing(e *env, s queueStore) {
	q, other := queue(0), queue(1)
	e.enqueueOne(newItem(q, "before"))
	live := e.claimOne(q, "a", long)
	e.enqueueOne(newItem(q, "waiting"))
	require.NoError(e, s.Pause(e.ctx, q))
	require.NoError(e, s.Pause(e.ctx, q), "Pause of a paused queue")
	e.claimNone(q)
	e.enqueueOne(newItem(q, "while paused"))
	e.enqueueOne(newItem(other, "elsewhere"))
	assert.Equal(e, claim.Counts{Visible: 2, Claimed: 1}, e.counts(q), "Enqueue goes on while paused")
	e.claimNone(q)
	e.claimOne(other, "a", long)
	e.settle(live, claim.SettleRetry, 0, "again")
	e.claimNone(q)
	require.NoError(e, s.Resume(e.ctx, q))
	require.NoError(e, s.Resume(e.ctx, q), "Resume of a queue not paused")
	assert.Len(e, e.claim(q, "a", 10, long), 3, "everything is claimable once resumed")
}

// testResumeWakes: Resume closes the queue's Notify channels.
func testResumeWakes(e *env, s queueStore) {
	q := queue(0)
	require.NoError(e, s.Pause(e.ctx, q))
	e.enqueueOne(newItem(q, "x"))
	e.claimNone(q)
	ready, stop := s.Notify(q)
	defer stop()
	require.NoError(e, s.Resume(e.ctx, q))
	e.woken(ready, "Resume")
	e.claimOne(q, "a", long)
}

// testQueuesListed: Queues lists the queues with items and the paused ones,
// in name order, with their counts, paused flag and PausedAt, a page at a
// time.
func testQueuesListed(e *env, s queueStore) {
	a, b, c := queue(1), queue(2), queue(3)
	e.enqueueOne(newItem(a, "x"))
	e.enqueueOne(newItem(b, "y"))
	e.claimOne(b, "w", long)
	before := e.clock.Now()
	require.NoError(e, s.Pause(e.ctx, c)) // paused, with no item
	after := e.clock.Now()
	got, err := s.Queues(e.ctx, claim.QueueQuery{Limit: 10})
	require.NoError(e, err)
	require.Len(e, got, 3)
	assert.Equal(e, claim.QueueInfo{Name: a, Counts: claim.Counts{Visible: 1}}, got[0])
	assert.Equal(e, claim.QueueInfo{Name: b, Counts: claim.Counts{Claimed: 1}}, got[1])
	assert.Equal(e, c, got[2].Name)
	assert.True(e, got[2].Paused)
	e.near(got[2].PausedAt, before, after, 0, "PausedAt")
	page, err := s.Queues(e.ctx, claim.QueueQuery{After: a, Limit: 1})
	require.NoError(e, err)
	require.Len(e, page, 1)
	assert.Equal(e, b, page[0].Name, "the page after a")
	require.NoError(e, s.Resume(e.ctx, c))
	got, err = s.Queues(e.ctx, claim.QueueQuery{Limit: 10})
	require.NoError(e, err)
	assert.Len(e, got, 2, "a resumed queue with no item is not listed")
}

// testQueuesBadInput: bad input is refused naming the field.
func testQueuesBadInput(e *env, s queueStore) {
	var nilCtx context.Context
	requireInvalid(e, s.Pause(e.ctx, ""), "Pause of the empty queue")
	requireInvalid(e, s.Resume(e.ctx, ""), "Resume of the empty queue")
	requireInvalid(e, s.Pause(nilCtx, queue(0)), "Pause with nil ctx")
	_, err := s.Queues(e.ctx, claim.QueueQuery{Limit: 0})
	requireInvalid(e, err, "Queues with limit 0")
	got, err := s.Queues(e.ctx, claim.QueueQuery{Limit: 1})
	require.NoError(e, err)
	assert.Empty(e, got, "nothing was paused")
}
