package claim_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// Work on a paused queue idles: items enqueued meanwhile wake nobody and
// are not handled, however long it waits; ResumeQueue sets it going at
// once.
func TestWorkIdlesWhilePausedAndResumesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		require.NoError(t, b.PauseQueue(ctx, q))
		var handled atomic.Int64
		stop := startWork(t, b, claim.Worker{Queue: q, Handler: func(context.Context, claim.Claim) error {
			handled.Add(1)
			return nil
		}})
		for range 3 {
			enqueue(t, b, q, "x")
		}
		<-time.After(time.Hour) // in the bubble: an hour of fake time at once
		synctest.Wait()
		assert.Zero(t, handled.Load(), "a paused queue hands out nothing")
		assert.Equal(t, counts(3, 0, 0, 0), countsOf(t, b, q))
		require.NoError(t, b.ResumeQueue(ctx, q))
		synctest.Wait()
		assert.EqualValues(t, 3, handled.Load(), "resumed: handled without waiting for anything")
		require.NoError(t, stop())
	})
}

func TestBrokerQueuesAndPauseBadInput(t *testing.T) {
	b, _, _ := newBroker(t)
	for _, err := range []error{b.PauseQueue(ctx, ""), b.ResumeQueue(ctx, "")} {
		le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
		assert.Equal(t, "queue", le.Field)
	}
	_, err := b.Queues(ctx, claim.QueueQuery{})
	le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "limit", le.Field)

	enqueue(t, b, q, "x")
	require.NoError(t, b.PauseQueue(ctx, q))
	got, err := b.Queues(ctx, claim.QueueQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, claim.QueueInfo{Name: q, Counts: counts(1, 0, 0, 0), Paused: true, PausedAt: t0}, got[0])

	svc := lease.New()
	defer func() { require.NoError(t, svc.Close()) }()
	plain := claim.New(struct{ claim.Store }{claim.NewMemory(svc)})
	defer func() { require.NoError(t, plain.Close()) }()
	le = requireCode(t, plain.PauseQueue(ctx, q), lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "store", le.Field)
	_, err = plain.Queues(ctx, claim.QueueQuery{Limit: 1})
	le = requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "store", le.Field)
}
