package claimtest

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
)

// testRetryNow: a claimstore.Retrier's RetryNow makes a delayed item (by its
// enqueue's Delay or by a retry's backoff) claimable at once, keeping its
// attempts and history, and wakes the queue's waiters; a visible item is
// returned as it is; a claimed, dead or finished item, an item of another
// queue and no item at all are not found, and nothing changes; ID 0 and an
// empty queue are bad input.
func testRetryNow(e *env, r claimstore.Retrier) {
	q, other := queue(0), queue(1)
	delayed := newItem(q, "delayed")
	delayed.Delay = long
	d := e.enqueueOne(delayed)
	e.claimNone(q)
	ready, stop := e.s.Notify(q)
	got, err := r.RetryNow(e.ctx, q, d.ID)
	require.NoError(e, err, "RetryNow of an item delayed by its enqueue")
	e.woken(ready, "RetryNow")
	stop()
	assert.Equal(e, d.ID, got.ID)
	assert.Equal(e, claim.Visible, got.State)
	assert.Equal(e, 0, got.Attempts)
	a := e.claimOne(q, "a", long)
	assert.Equal(e, d.ID, a.Item)
	assert.Equal(e, 1, a.Attempt)

	// A backoff: the attempt and the failure are kept.
	e.settle(a, claim.SettleRetry, long, "boom")
	require.Equal(e, claim.Delayed, e.lookup(d.ID).State)
	e.claimNone(q)
	got, err = r.RetryNow(e.ctx, q, d.ID)
	require.NoError(e, err, "RetryNow of an item delayed by a retry")
	assert.Equal(e, claim.Visible, got.State)
	assert.Equal(e, 1, got.Attempts)
	if assert.Len(e, got.History, 1) {
		assert.Equal(e, "boom", got.History[0].Reason)
	}
	// Visible: returned as it is.
	again, err := r.RetryNow(e.ctx, q, d.ID)
	require.NoError(e, err, "RetryNow of a visible item")
	assert.Empty(e, diffItem(again, got), "a visible item is returned as it is")
	b := e.claimOne(q, "b", long)
	assert.Equal(e, 2, b.Attempt)

	// Anything but a waiting item of the queue is not found.
	_, errClaimed := r.RetryNow(e.ctx, q, d.ID)
	dead := e.deadItem(newItem(other, "dead"))
	_, errDead := r.RetryNow(e.ctx, other, dead.ID)
	later := newItem(other, "later")
	later.Delay = long
	l := e.enqueueOne(later)
	_, errQueue := r.RetryNow(e.ctx, q, l.ID)
	_, errNone := r.RetryNow(e.ctx, other, l.ID+1000)
	e.notFound("RetryNow of no waiting item of the queue", errClaimed, errDead, errQueue, errNone)
	_, err = e.s.Extend(e.ctx, b.Ref, long)
	require.NoError(e, err, "the claim is still live after RetryNow")
	assert.Equal(e, claim.Dead, e.lookup(dead.ID).State)
	assert.Equal(e, claim.Delayed, e.lookup(l.ID).State)
	e.settle(b, claim.SettleComplete, 0, "")
	_, errDone := r.RetryNow(e.ctx, q, d.ID)
	e.notFound("RetryNow of a completed item", errDone)

	// Bad input names the field.
	_, err = r.RetryNow(e.ctx, other, 0)
	var le *lease.Error
	if assert.ErrorIs(e, err, lease.ErrInvalidArgument, "RetryNow ID 0") && assert.ErrorAs(e, err, &le) {
		assert.Equal(e, "id", le.Field)
	}
	_, err = r.RetryNow(e.ctx, "", l.ID)
	assert.ErrorIs(e, err, lease.ErrInvalidArgument, "RetryNow empty queue")
	assert.Equal(e, claim.Delayed, e.lookup(l.ID).State, "bad input changes nothing")
}
