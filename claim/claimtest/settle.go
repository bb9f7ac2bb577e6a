package claimtest

import (
	"sync"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// lostCall is one call of a ClaimRequest's Lost function.
type lostCall struct {
	ref   claim.Ref
	cause error
}

// lostRecorder records the calls of a Lost function. A store may call it
// with its lock held, so it only appends.
type lostRecorder struct {
	mu    sync.Mutex
	calls []lostCall
}

func (r *lostRecorder) lost(ref claim.Ref, cause error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, lostCall{ref, cause})
}

func (r *lostRecorder) get() []lostCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]lostCall(nil), r.calls...)
}

// checkLost checks that Lost was called for nothing but want, at most once:
// a store need not call it at all.
func (e *env) checkLost(r *lostRecorder, want claim.Ref, what string) []lostCall {
	e.Helper()
	calls := r.get()
	assert.LessOrEqual(e, len(calls), 1, "%s: Lost is called at most once per claim", what)
	for _, c := range calls {
		assert.Equal(e, want, c.ref, "%s: Lost called for another claim", what)
		assert.Error(e, c.cause, "%s: Lost called with a nil cause", what)
	}
	return calls
}

// testLeaseAndExtend: a claim lasts its lease; Extend moves its expiry to
// now plus the new lease, past the old expiry, and the claim is lost at the
// new one.
func testLeaseAndExtend(e *env) {
	q := queue(0)
	e.enqueueOne(newItem(q, "x"))
	c := e.claimOne(q, "a", e.short())
	if e.fake() {
		e.adv.Advance(e.short() / 2)
	}
	before := e.clock.Now()
	exp, err := e.s.Extend(e.ctx, c.Ref, 2*e.short())
	after := e.clock.Now()
	require.NoError(e, err, "Extend of a live claim")
	e.near(exp, before, after, 2*e.short(), "Extend's expiry")
	e.until(c.ExpiresAt) // the first lease ends; the extended claim holds
	e.claimNone(q)
	assert.Equal(e, claim.Claimed, e.lookup(c.Item).State, "State after the original expiry")
	before = e.clock.Now()
	exp, err = e.s.Extend(e.ctx, c.Ref, e.short())
	after = e.clock.Now()
	require.NoError(e, err, "Extend again")
	e.near(exp, before, after, e.short(), "the second Extend's expiry")
	e.due(q, exp)
	_, err = e.s.Extend(e.ctx, c.Ref, long)
	assert.ErrorIs(e, err, lease.ErrStaleUse, "Extend after the claim's expiry")
	assert.Equal(e, c.Item, e.claimOne(q, "b", long).Item, "the item is claimable once the extended lease ends")
}

// testExpiredReclaimable: a claim whose lease ends unsettled makes its item
// claimable at once, with a lost failure in its history, and a later claim
// has a new token and the next attempt. A claim that expired is stale even
// while nobody has claimed the item again.
func testExpiredReclaimable(e *env) {
	q := queue(0)
	it := e.enqueueOne(newItem(q, "x"))
	var rec lostRecorder
	got := e.claimReq(claim.ClaimRequest{Queue: q, Owner: "a", Limit: 1, Lease: e.short(), Lost: rec.lost})
	require.Len(e, got, 1)
	a := got[0]
	e.almost(a.ExpiresAt)
	e.claimNone(q)
	assert.Empty(e, rec.get(), "Lost called before the claim's expiry")
	e.until(a.ExpiresAt)
	x := e.lookup(it.ID)
	assert.Equal(e, claim.Visible, x.State, "an item whose claim expired is visible at once")
	assert.Equal(e, claim.Counts{Visible: 1}, e.counts(q))
	e.stale(a, "a claim that expired, not yet claimed again")
	e.checkLost(&rec, a.Ref, "expiry")
	b := e.claimOne(q, "b", long)
	assert.Equal(e, it.ID, b.Item)
	assert.Equal(e, 2, b.Attempt, "the reclaim is the second attempt")
	assert.NotEqual(e, a.Ref.Token, b.Ref.Token, "the reclaim has a new token")
	x = e.lookup(it.ID)
	assert.Equal(e, 2, x.Attempts)
	if assert.Len(e, x.History, 1, "the lost claim is in the history") {
		f := x.History[0]
		assert.True(e, f.Lost, "Failure.Lost")
		assert.Equal(e, 1, f.Attempt, "Failure.Attempt")
		assert.Equal(e, "a", f.Owner, "Failure.Owner")
		e.near(f.At, a.ExpiresAt, e.clock.Now(), 0, "Failure.At of an expiry")
	}
	e.checkLost(&rec, a.Ref, "expiry")
}

// testStaleAfterReclaim: every call with the claim of an expired lease is
// refused once the item is claimed again, and leaves the new claim as it
// was: live, with the same history and attempts.
func testStaleAfterReclaim(e *env) {
	q := queue(0)
	e.enqueueOne(newItem(q, "x"))
	a := e.claimOne(q, "a", e.short())
	e.until(a.ExpiresAt)
	b := e.claimOne(q, "b", long)
	before := e.lookup(b.Item)
	e.stale(a, "the old claim")
	after := e.lookup(b.Item)
	assert.Empty(e, diffItem(after, before), "stale calls changed the item")
	assert.Equal(e, claim.Claimed, after.State)
	e.claimNone(q)
	_, err := e.s.Extend(e.ctx, b.Ref, long)
	require.NoError(e, err, "the new claim is live")
	e.settle(b, claim.SettleComplete, 0, "")
}

// testCompleteOnce: Complete removes the item for good; the claim is stale
// from then on.
func testCompleteOnce(e *env) {
	q := queue(0)
	it := e.enqueueOne(newItem(q, "x"))
	c := e.claimOne(q, "a", long)
	e.settle(c, claim.SettleComplete, 0, "")
	e.gone(it.ID)
	e.stale(c, "a completed claim")
	e.claimNone(q)
	assert.Equal(e, claim.Counts{}, e.counts(q))
	assert.Empty(e, e.list(claim.Query{Queue: q, Limit: 10}))
}

// testRetryAfterDelay: Retry records the failure and makes the item
// claimable again After later, for its next attempt; with no After, at
// once.
func testRetryAfterDelay(e *env) {
	q := queue(0)
	it := e.enqueueOne(newItem(q, "x"))
	a := e.claimOne(q, "a", long)
	x, before, after := e.settleLook(a, claim.SettleRetry, e.short(), "boom")
	assert.Equal(e, claim.Delayed, x.State)
	assert.Equal(e, 1, x.Attempts)
	e.near(x.VisibleAt, before, after, e.short(), "VisibleAt after a retry")
	if assert.Len(e, x.History, 1) {
		f := x.History[0]
		assert.Equal(e, claim.Failure{Attempt: 1, Owner: "a", Reason: "boom", At: f.At}, f, "the retry's failure")
		e.near(f.At, before, after, 0, "Failure.At")
	}
	e.stale(a, "a retried claim")
	e.due(q, x.VisibleAt)
	b := e.claimOne(q, "b", long)
	assert.Equal(e, 2, b.Attempt)
	e.settle(b, claim.SettleRetry, 0, "again")
	c := e.claimOne(q, "c", long)
	assert.Equal(e, 3, c.Attempt, "a retry with no After is claimable at once")
	assert.Len(e, e.lookup(it.ID).History, 2)
}

// testDeadAfterLastAttempt: an item goes dead when its claim settles Dead,
// and when the claim of its last attempt is lost; either way with the
// failure in its history, and no longer claimable.
func testDeadAfterLastAttempt(e *env) {
	q := queue(0)
	e.enqueueOne(newItem(q, "settled"))
	a := e.claimOne(q, "a", long)
	x, before, after := e.settleLook(a, claim.SettleDead, 0, "fatal")
	assert.Equal(e, claim.Dead, x.State)
	e.near(x.DeadAt, before, after, 0, "DeadAt")
	assert.True(e, x.VisibleAt.IsZero(), "VisibleAt of a dead item is zero")
	if assert.Len(e, x.History, 1) {
		assert.Equal(e, "fatal", x.History[0].Reason)
		assert.False(e, x.History[0].Lost)
	}
	e.stale(a, "a claim settled dead")
	e.claimNone(q)

	n := newItem(q, "lost")
	n.MaxAttempts = 2
	lost := e.enqueueOne(n)
	e.settle(e.claimOne(q, "a", long), claim.SettleRetry, 0, "first")
	b := e.claimOne(q, "b", e.short())
	require.Equal(e, 2, b.Attempt)
	e.until(b.ExpiresAt)
	x = e.lookup(lost.ID)
	assert.Equal(e, claim.Dead, x.State, "the last attempt's lost claim makes the item dead at once")
	e.near(x.DeadAt, b.ExpiresAt, e.clock.Now(), 0, "DeadAt of a lost last attempt")
	if assert.Len(e, x.History, 2) {
		assert.True(e, x.History[1].Lost)
		assert.Equal(e, 2, x.History[1].Attempt)
		assert.Equal(e, "b", x.History[1].Owner)
	}
	e.claimNone(q)
	e.stale(b, "a lost last attempt")
	assert.Equal(e, claim.Counts{Dead: 2}, e.counts(q))
}

// testSnooze: Snooze makes the item claimable After later without spending
// an attempt or adding history: an item of one attempt can snooze forever.
func testSnooze(e *env) {
	q := queue(0)
	n := newItem(q, "x")
	n.MaxAttempts = 1
	it := e.enqueueOne(n)
	a := e.claimOne(q, "a", long)
	x, before, after := e.settleLook(a, claim.SettleSnooze, e.short(), "")
	assert.Equal(e, claim.Delayed, x.State)
	assert.Zero(e, x.Attempts, "Snooze gives the attempt back")
	assert.Empty(e, x.History, "Snooze adds no history")
	e.near(x.VisibleAt, before, after, e.short(), "VisibleAt after a snooze")
	e.stale(a, "a snoozed claim")
	e.due(q, x.VisibleAt)
	b := e.claimOne(q, "b", long)
	assert.Equal(e, 1, b.Attempt, "the claim after a snooze is the same attempt")
	e.settle(b, claim.SettleSnooze, 0, "")
	c := e.claimOne(q, "c", e.short())
	assert.Equal(e, 1, c.Attempt, "a snooze with no After is claimable at once")
	assert.Empty(e, e.lookup(it.ID).History)
	e.until(c.ExpiresAt)
	assert.Equal(e, claim.Dead, e.lookup(it.ID).State, "the attempt is still the last")
}

// deadItem enqueues n and leaves it dead, with one failure.
func (e *env) deadItem(n claim.NewItem) claim.Item {
	e.Helper()
	it := e.enqueueOne(n)
	c := e.claimOne(n.Queue, "a", long)
	require.Equal(e, it.ID, c.Item, "deadItem needs an otherwise empty queue")
	e.settle(c, claim.SettleDead, 0, "dead")
	return e.lookup(it.ID)
}

// notFound checks that each call fails with ErrNotFound.
func (e *env) notFound(what string, errs ...error) {
	e.Helper()
	for i, err := range errs {
		assert.ErrorIs(e, err, claim.ErrNotFound, "%s (case %d)", what, i)
	}
}

// testRequeueDead: a requeued dead letter is visible at once with no
// attempts used and its history kept; anything but a dead letter of that
// queue is not found, and nothing changes.
func testRequeueDead(e *env) {
	q, other := queue(0), queue(1)
	d := e.deadItem(newItem(q, "x"))
	claimed := e.enqueueOne(newItem(other, "claimed"))
	e.claimOne(other, "a", long)
	vis := e.enqueueOne(newItem(other, "visible"))
	_, err1 := e.s.RequeueDead(e.ctx, other, d.ID) // wrong queue
	_, err2 := e.s.RequeueDead(e.ctx, other, vis.ID)
	_, err3 := e.s.RequeueDead(e.ctx, other, claimed.ID)
	_, err4 := e.s.RequeueDead(e.ctx, q, d.ID+1000)
	e.notFound("RequeueDead of no dead letter", err1, err2, err3, err4)
	assert.Equal(e, claim.Counts{Visible: 1, Claimed: 1}, e.counts(other))
	assert.Empty(e, diffItem(e.lookup(d.ID), d), "a refused RequeueDead changed the dead item")

	before := e.clock.Now()
	got, err := e.s.RequeueDead(e.ctx, q, d.ID)
	after := e.clock.Now()
	require.NoError(e, err, "RequeueDead")
	assert.Equal(e, claim.Visible, got.State)
	assert.Zero(e, got.Attempts, "RequeueDead resets the attempts")
	assert.Len(e, got.History, 1, "RequeueDead keeps the history")
	assert.True(e, got.DeadAt.IsZero(), "DeadAt of a requeued item")
	e.near(got.VisibleAt, before, after, 0, "VisibleAt of a requeued item")
	assert.Empty(e, diffItem(e.lookup(d.ID), got), "Lookup returns what RequeueDead did")
	c := e.claimOne(q, "b", long)
	assert.Equal(e, d.ID, c.Item)
	assert.Equal(e, 1, c.Attempt)
	_, err = e.s.RequeueDead(e.ctx, q, d.ID)
	e.notFound("RequeueDead of a requeued item", err)
}

// testDeleteDead: a deleted dead letter is gone and its key free; anything
// but a dead letter of that queue is not found, and nothing changes.
func testDeleteDead(e *env) {
	q, other := queue(0), queue(1)
	n := newItem(q, "x")
	n.Key = "k"
	d := e.deadItem(n)
	vis := e.enqueueOne(newItem(other, "visible"))
	e.notFound("DeleteDead of no dead letter",
		e.s.DeleteDead(e.ctx, other, d.ID),
		e.s.DeleteDead(e.ctx, other, vis.ID),
		e.s.DeleteDead(e.ctx, q, d.ID+1000))
	assert.Equal(e, claim.Counts{Visible: 1}, e.counts(other))
	assert.Equal(e, claim.Counts{Dead: 1}, e.counts(q))
	require.NoError(e, e.s.DeleteDead(e.ctx, q, d.ID), "DeleteDead")
	e.gone(d.ID)
	assert.Equal(e, claim.Counts{}, e.counts(q))
	e.notFound("DeleteDead again", e.s.DeleteDead(e.ctx, q, d.ID))
	again := e.enqueueOne(n)
	assert.NotEqual(e, d.ID, again.ID, "the key is free once its dead item is deleted")
}
