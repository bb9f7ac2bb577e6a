package claimtest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/internal/suite"
	"github.com/leasehold/lease/leasetest"
)

// env is what a clause runs with: the store, its clock, and helpers that
// fail the clause on an unexpected result.
type env struct {
	*testing.T
	s     claim.Store
	clock lease.Clock
	adv   leasetest.Advancer // nil on a real clock
	ctx   context.Context
	rep   *suite.Report // the capabilities exercised
}

// fake reports whether time is driven by the suite.
func (e *env) fake() bool { return e.adv != nil }

// short is the lease or delay of clauses that wait for one to end.
func (e *env) short() time.Duration {
	if e.fake() {
		return fakeShort
	}
	return realShort
}

// slack is how far a time the store reports may be from the test's
// reckoning: none with a fake clock.
func (e *env) slack() time.Duration {
	if e.fake() {
		return 0
	}
	return realSlack
}

// scale returns n with a fake clock and real otherwise.
func (e *env) scale(n, real int) int {
	if e.fake() {
		return n
	}
	return real
}

// pass lets d go by: at once with a fake clock, in real time (plus slack)
// otherwise.
func (e *env) pass(d time.Duration) {
	e.Helper()
	if e.fake() {
		e.adv.Advance(d)
		return
	}
	<-time.After(d + realSlack)
}

// until lets time reach t: exactly with a fake clock, t plus slack in real
// time otherwise.
func (e *env) until(t time.Time) {
	e.Helper()
	d := t.Sub(e.clock.Now())
	if e.fake() {
		if d > 0 {
			e.adv.Advance(d)
		}
		return
	}
	<-time.After(max(d, 0) + realSlack)
}

// almost moves a fake clock to a nanosecond before t; on a real clock it
// does nothing.
func (e *env) almost(t time.Time) {
	e.Helper()
	if e.fake() {
		require.True(e, t.After(e.clock.Now()), "almost: %v is not ahead", t)
		e.adv.Advance(t.Sub(e.clock.Now()) - 1)
	}
}

// due lets time reach t, checking on the way that nothing of queue is
// claimable before it (with a fake clock, a nanosecond before).
func (e *env) due(queue string, t time.Time) {
	e.Helper()
	e.claimNone(queue)
	e.almost(t)
	e.claimNone(queue)
	e.until(t)
}

// near checks that got is d after some instant between before and after
// (the test's readings around the call), give or take the slack.
func (e *env) near(got, before, after time.Time, d time.Duration, what string) {
	e.Helper()
	lo, hi := before.Add(d).Add(-e.slack()), after.Add(d).Add(e.slack())
	if got.Before(lo) || got.After(hi) {
		e.Errorf("%s is %v, want between %v and %v", what, got, lo, hi)
	}
}

// queue returns a queue name unique within the clause.
func queue(i int) string { return "claimtest-" + strconv.Itoa(i) }

// newItem is a valid item of queue with a distinct payload.
func newItem(queue string, payload string) claim.NewItem {
	return claim.NewItem{Queue: queue, Payload: []byte(payload), MaxAttempts: 3}
}

func (e *env) enqueue(items ...claim.NewItem) []claim.Item {
	e.Helper()
	got, err := e.s.Enqueue(e.ctx, items)
	require.NoError(e, err, "Enqueue")
	require.Len(e, got, len(items), "Enqueue returns one item per input")
	for i, it := range got {
		require.NotZero(e, it.ID, "Enqueue: item %d has ID 0", i)
		require.Equal(e, items[i].Queue, it.Queue, "Enqueue: item %d Queue", i)
	}
	return got
}

func (e *env) enqueueOne(n claim.NewItem) claim.Item {
	e.Helper()
	return e.enqueue(n)[0]
}

// claimReq claims with req and checks what every claim must say.
func (e *env) claimReq(req claim.ClaimRequest) []claim.Claim {
	e.Helper()
	before := e.clock.Now()
	got, err := e.s.Claim(e.ctx, req)
	after := e.clock.Now()
	require.NoError(e, err, "Claim(%q, %q, limit %d)", req.Queue, req.Owner, req.Limit)
	require.NotNil(e, got, "Claim returns an empty slice, not nil, when nothing is claimable")
	require.LessOrEqual(e, len(got), req.Limit, "Claim returned more than its limit")
	for _, c := range got {
		require.Equal(e, req.Queue, c.Queue, "Claim.Queue")
		require.Equal(e, req.Owner, c.Owner, "Claim.Owner")
		require.Equal(e, c.Item, c.Ref.Item, "Claim.Ref.Item is the claim's item")
		require.NotZero(e, c.Ref.Token, "Claim.Ref.Token must not be 0")
		require.GreaterOrEqual(e, c.Attempt, 1, "Claim.Attempt")
		e.near(c.ExpiresAt, before, after, req.Lease, "Claim.ExpiresAt")
	}
	return got
}

func (e *env) claim(queue, owner string, limit int, d time.Duration) []claim.Claim {
	e.Helper()
	return e.claimReq(claim.ClaimRequest{Queue: queue, Owner: owner, Limit: limit, Lease: d})
}

func (e *env) claimOne(queue, owner string, d time.Duration) claim.Claim {
	e.Helper()
	got := e.claim(queue, owner, 1, d)
	require.Len(e, got, 1, "Claim(%q): one item should be claimable", queue)
	return got[0]
}

func (e *env) claimNone(queue string) {
	e.Helper()
	got := e.claim(queue, "nobody", 10, long)
	require.Empty(e, got, "Claim(%q): nothing should be claimable", queue)
}

func (e *env) settle(c claim.Claim, how claim.Settle, after time.Duration, reason string) {
	e.Helper()
	err := e.s.Settle(e.ctx, claim.Settlement{Ref: c.Ref, How: how, After: after, Reason: reason})
	require.NoError(e, err, "Settle(item %d, %v)", c.Item, how)
}

// settleLook settles c and returns the item then, with the test's clock
// readings around the Settle.
func (e *env) settleLook(c claim.Claim, how claim.Settle, after time.Duration, reason string) (x claim.Item, before, afterCall time.Time) {
	e.Helper()
	before = e.clock.Now()
	e.settle(c, how, after, reason)
	afterCall = e.clock.Now()
	return e.lookup(c.Item), before, afterCall
}

// stale checks that every call on the claim c is refused as stale.
func (e *env) stale(c claim.Claim, what string) {
	e.Helper()
	_, err := e.s.Extend(e.ctx, c.Ref, long)
	assert.ErrorIs(e, err, lease.ErrStaleUse, "%s: Extend", what)
	for how := claim.SettleComplete; how <= claim.SettleSnooze; how++ {
		err := e.s.Settle(e.ctx, claim.Settlement{Ref: c.Ref, How: how, Reason: "stale"})
		assert.ErrorIs(e, err, lease.ErrStaleUse, "%s: Settle %v", what, how)
	}
}

func (e *env) lookup(id claim.ItemID) claim.Item {
	e.Helper()
	it, err := e.s.Lookup(e.ctx, id)
	require.NoError(e, err, "Lookup(%d)", id)
	require.Equal(e, id, it.ID, "Lookup(%d).ID", id)
	return it
}

func (e *env) gone(id claim.ItemID) {
	e.Helper()
	_, err := e.s.Lookup(e.ctx, id)
	require.ErrorIs(e, err, claim.ErrNotFound, "Lookup(%d) of an item that does not exist", id)
}

func (e *env) counts(queue string) claim.Counts {
	e.Helper()
	c, err := e.s.Counts(e.ctx, queue)
	require.NoError(e, err, "Counts(%q)", queue)
	return c
}

func (e *env) list(q claim.Query) []claim.Item {
	e.Helper()
	got, err := e.s.List(e.ctx, q)
	require.NoError(e, err, "List(%+v)", q)
	return got
}

// itemIDs returns the IDs of items.
func itemIDs(items []claim.Item) []claim.ItemID {
	out := make([]claim.ItemID, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// claimIDs returns the items of claims.
func claimIDs(claims []claim.Claim) []claim.ItemID {
	out := make([]claim.ItemID, len(claims))
	for i, c := range claims {
		out[i] = c.Item
	}
	return out
}
