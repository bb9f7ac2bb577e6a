package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// queues lists every queue with its counts and paused flag, in name order.
func TestQueues(t *testing.T) {
	e := newEnv(t)
	assert.Equal(t, []string{"QUEUE VISIBLE DELAYED CLAIMED DEAD COMPLETED CANCELLED PAUSED"}, lines(e.ok("queues")))
	assert.Equal(t, "[]\n", e.ok("--json", "queues"))

	e.dead("mail", "p", "boom")
	e.enqueue("mail", "p")
	e.claimOne("mail")
	e.enqueue("mail", "p")
	e.enqueue("mail", "p", claim.Delay(time.Hour))
	e.enqueue("a-long-queue-name", "p")
	require.NoError(t, e.broker.Complete(ctx, e.claimOne("a-long-queue-name")))
	require.NoError(t, e.broker.PauseQueue(ctx, "paused-empty"))

	out := e.ok("queues")
	ls := lines(out)
	require.Len(t, ls, 4, out)
	assert.Equal(t, "a-long-queue-name 0 0 0 0 1 0 no", ls[1])
	assert.Equal(t, "mail 1 1 1 1 0 0 no", ls[2])
	assert.Regexp(t, `^paused-empty 0 0 0 0 0 0 since \S+Z$`, ls[3])
	requireAligned(t, out)

	got := okJSON[[]queueJSON](e, "queues")
	require.Len(t, got, 3)
	assert.Equal(t, queueJSON{Name: "mail", Visible: 1, Delayed: 1, Claimed: 1, Dead: 1}, got[1])
	assert.True(t, got[2].Paused)
	require.NotNil(t, got[2].PausedAt)
	assert.WithinDuration(t, time.Now(), *got[2].PausedAt, time.Minute)
}

// queue pause and resume pause and resume a queue for every worker, and
// say what changed.
func TestQueuePauseResume(t *testing.T) {
	e := newEnv(t)
	e.enqueue("mail", "p")
	assert.Equal(t, "queue mail paused\n", e.ok("queue", "pause", "mail"))
	cs, err := e.broker.Claim(ctx, "mail", "w", 1, time.Minute)
	require.NoError(t, err)
	assert.Empty(t, cs, "a paused queue hands out nothing")
	qs, err := e.broker.Queues(ctx, claim.QueueQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, qs, 1)
	assert.True(t, qs[0].Paused)
	assert.Regexp(t, `^queue mail was already paused, since \S+Z: nothing changed\n$`, e.ok("queue", "pause", "mail"))

	got := okJSON[map[string]any](e, "queue", "resume", "mail")
	assert.Equal(t, map[string]any{"queue": "mail", "paused": false, "result": "resumed"}, got)
	e.claimOne("mail")
	assert.Equal(t, "queue mail was not paused: nothing changed\n", e.ok("queue", "resume", "mail"))
	assert.Equal(t, map[string]any{"queue": "mail", "paused": false, "result": "not paused"},
		okJSON[map[string]any](e, "queue", "resume", "mail"))
	assert.Equal(t, map[string]any{"queue": "other", "paused": true, "result": "created paused"},
		okJSON[map[string]any](e, "queue", "pause", "other"))
	assert.Equal(t, map[string]any{"queue": "other", "paused": true, "result": "already paused"},
		okJSON[map[string]any](e, "queue", "pause", "other"))
	assert.Equal(t, "queue empty had no items: created it, paused; its workers take nothing until 'leasectl queue resume empty'\n",
		e.ok("queue", "pause", "empty"))
	qs, err = e.broker.Queues(ctx, claim.QueueQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, qs, 3)
	assert.Equal(t, "empty", qs[0].Name)
	assert.True(t, qs[0].Paused, "the queue created is listed, paused")

	// Many names sorting just before the queue's do not hide its state.
	for i := range 2*queuePage + 10 {
		e.enqueue(fmt.Sprintf("jobr-%04d", i), "p")
	}
	require.NoError(t, e.broker.PauseQueue(ctx, "jobs"))
	assert.Equal(t, "already paused", okJSON[map[string]any](e, "queue", "pause", "jobs")["result"])
	assert.Equal(t, "created paused", okJSON[map[string]any](e, "queue", "pause", "jobt")["result"])

	e.fails(exitUsage, "takes 1 argument(s): QUEUE; got 0", "queue", "pause")
	e.fails(exitUsage, "must not be empty", "queue", "resume", "")
	e.fails(exitUsage, `queue has no command "stop": one of pause, resume`, "queue", "stop")
}
