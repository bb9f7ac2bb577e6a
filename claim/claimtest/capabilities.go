package claimtest

import (
	"context"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
	"github.com/leasehold/lease/internal/suite"
)

// capabilityClauses are the clauses of the optional capabilities that
// need no store of their own: claimstore.Retrier and claimstore.TimeBase.
var capabilityClauses = []clause{
	{"RetryNowMakesDelayedVisible", needs(testRetryNowDelayed)},
	{"RetryNowKeepsAttempts", needs(testRetryNowKeepsAttempts)},
	{"RetryNowOtherStatesNotFound", needs(testRetryNowOtherStates)},
	{"RetryNowBadInput", needs(testRetryNowBadInput)},
	{"TimeBaseIsTheStoreClock", needs(testTimeBase)},
}

// testRetryNowDelayed: RetryNow makes a delayed item visible and claimable
// at once, and returns a visible item as it is.
func testRetryNowDelayed(e *env, r claimstore.Retrier) {
	q := queue(0)
	n := newItem(q, "delayed")
	n.Delay = long
	it := e.enqueueOne(n)
	require.Equal(e, claim.Delayed, it.State)
	e.claimNone(q)
	before := e.clock.Now()
	got, err := r.RetryNow(e.ctx, q, it.ID)
	after := e.clock.Now()
	require.NoError(e, err, "RetryNow of a delayed item")
	assert.Equal(e, it.ID, got.ID)
	assert.Equal(e, claim.Visible, got.State, "RetryNow makes the item visible")
	e.near(got.VisibleAt, before, after, 0, "VisibleAt after RetryNow")
	assert.Equal(e, claim.Visible, e.lookup(it.ID).State, "Lookup agrees")
	e.claimNone(queue(1))

	again, err := r.RetryNow(e.ctx, q, it.ID)
	require.NoError(e, err, "RetryNow of a visible item")
	assert.Equal(e, claim.Visible, again.State)
	assert.Equal(e, got.VisibleAt, again.VisibleAt, "a visible item is returned as it is")
	assert.Equal(e, it.ID, e.claimOne(q, "a", long).Item, "the retried item is claimable at once")
}

// testRetryNowKeepsAttempts: an item waiting out a retry's backoff is
// claimable at once after RetryNow, with its attempts and history kept.
func testRetryNowKeepsAttempts(e *env, r claimstore.Retrier) {
	q := queue(0)
	it := e.enqueueOne(newItem(q, "backoff"))
	e.settle(e.claimOne(q, "a", long), claim.SettleRetry, long, "first")
	e.claimNone(q)
	got, err := r.RetryNow(e.ctx, q, it.ID)
	require.NoError(e, err)
	assert.Equal(e, 1, got.Attempts, "RetryNow keeps the attempts used")
	if assert.Len(e, got.History, 1, "RetryNow keeps the history") {
		assert.Equal(e, "first", got.History[0].Reason)
	}
	c := e.claimOne(q, "b", long)
	assert.Equal(e, 2, c.Attempt, "the next claim is the second attempt")
}

// testRetryNowOtherStates: RetryNow of a claimed or dead item, of an item
// of another queue or of no item gets lease.ErrNotFound and changes
// nothing.
func testRetryNowOtherStates(e *env, r claimstore.Retrier) {
	q, other := queue(0), queue(1)
	claimed := e.enqueueOne(newItem(q, "claimed"))
	c := e.claimOne(q, "a", long)
	_, err := r.RetryNow(e.ctx, q, claimed.ID)
	assert.ErrorIs(e, err, lease.ErrNotFound, "RetryNow of a claimed item")
	assert.Equal(e, claim.Claimed, e.lookup(claimed.ID).State, "a claimed item stays claimed")
	e.settle(c, claim.SettleComplete, 0, "")

	dead := e.deadItem(newItem(q, "dead"))
	_, err = r.RetryNow(e.ctx, q, dead.ID)
	assert.ErrorIs(e, err, lease.ErrNotFound, "RetryNow of a dead item")
	assert.Equal(e, claim.Dead, e.lookup(dead.ID).State, "a dead item stays dead")

	n := newItem(other, "elsewhere")
	n.Delay = long
	elsewhere := e.enqueueOne(n)
	_, err = r.RetryNow(e.ctx, q, elsewhere.ID)
	assert.ErrorIs(e, err, lease.ErrNotFound, "RetryNow in the wrong queue")
	assert.Equal(e, claim.Delayed, e.lookup(elsewhere.ID).State, "an item of another queue stays delayed")
	_, err = r.RetryNow(e.ctx, q, elsewhere.ID+1000)
	assert.ErrorIs(e, err, lease.ErrNotFound, "RetryNow of no item")
}

// testRetryNowBadInput: RetryNow refuses an empty queue as bad input.
func testRetryNowBadInput(e *env, r claimstore.Retrier) {
	n := newItem(queue(0), "delayed")
	n.Delay = long
	it := e.enqueueOne(n)
	_, err := r.RetryNow(e.ctx, "", it.ID)
	requireInvalid(e, err, "RetryNow with an empty queue")
	var nilCtx context.Context
	_, err = r.RetryNow(nilCtx, queue(0), it.ID)
	requireInvalid(e, err, "RetryNow with a nil ctx")
	assert.Equal(e, claim.Delayed, e.lookup(it.ID).State, "bad input changes nothing")
}

// testTimeBase: the store's Clock is the clock its deadlines are on: it
// reads the time the suite's clock reads, and a claim expires a lease
// after it.
func testTimeBase(e *env, tb claimstore.TimeBase) {
	clock := suite.TimeBase(e, tb, e.clock, e.slack())
	q := queue(0)
	e.enqueueOne(newItem(q, "timed"))
	start := clock.Now()
	c := e.claimOne(q, "a", long)
	end := clock.Now()
	e.near(c.ExpiresAt, start, end, long, "Claim.ExpiresAt on the store's Clock")
	assert.False(e, clock.Now().Before(end), "the store's Clock runs forward")
}
