package claimtest

import (
	"context"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
)

type retentionClause struct {
	name      string
	retention claim.Retention
	run       func(e *env, s claimstore.Cleaner)
}

// retained is the shortest retention of the clauses that wait for one to
// pass: the short lease of a real clock, on either clock.
const retained = realShort

var (
	keepLong  = claim.Retention{Completed: long, Cancelled: long, Dead: long}
	keepShort = claim.Retention{Completed: retained, Cancelled: 2 * retained, Dead: 3 * retained}
)

var retentionClauses = []retentionClause{
	{"CompletedKept", keepLong, testCompletedKept},
	{"CancelledKept", keepLong, testCancelledKept},
	{"CleanAfterRetention", keepShort, testCleanAfterRetention},
	{"CleanInBatches", keepShort, testCleanInBatches},
	{"ZeroRetentionKeepsNothing", claim.Retention{}, testZeroRetention},
	{"CleanBadInput", keepLong, testCleanBadInput},
}

// clean calls Clean and returns how many items it removed.
func (e *env) clean(s claimstore.Cleaner, limit int) int {
	e.Helper()
	n, err := s.Clean(e.ctx, limit)
	require.NoError(e, err, "Clean(%d)", limit)
	require.LessOrEqual(e, n, limit, "Clean removed more than its limit")
	return n
}

// testCompletedKept: a completed item is kept as Completed, with its
// FinishedAt, in Lookup, List and Counts; it is not claimable, its claim is
// stale, Cancel leaves it as it is, and it keeps its key.
func testCompletedKept(e *env, s claimstore.Cleaner) {
	q := queue(0)
	n := newItem(q, "done")
	n.Key = "k"
	it := e.enqueueOne(n)
	c := e.claimOne(q, "a", long)
	got, before, after := e.settleLook(c, claim.SettleComplete, 0, "")
	assert.Equal(e, claim.Completed, got.State, "a completed item is kept")
	e.near(got.FinishedAt, before, after, 0, "FinishedAt")
	assert.Equal(e, "done", string(got.Payload))
	assert.Equal(e, []claim.ItemID{it.ID}, itemIDs(e.list(claim.Query{Queue: q, State: claim.Completed, Limit: 10})))
	assert.Equal(e, []claim.ItemID{it.ID}, itemIDs(e.list(claim.Query{Queue: q, Limit: 10})), "List of every state")
	assert.Empty(e, e.list(claim.Query{Queue: q, State: claim.Visible, Limit: 10}))
	assert.Equal(e, claim.Counts{Completed: 1}, e.counts(q))
	e.claimNone(q)
	e.stale(c, "claim of a completed item")
	require.NoError(e, s.Cancel(e.ctx, q, it.ID), "Cancel of a completed item")
	assert.Equal(e, claim.Completed, e.lookup(it.ID).State, "Cancel leaves a completed item as it is")
	again := e.enqueueOne(n)
	assert.Equal(e, it.ID, again.ID, "a kept item holds its key")
	assert.Equal(e, claim.Completed, again.State)
	assert.Equal(e, 0, e.clean(s, 10), "nothing's retention has passed")
}

// testCancelledKept: a cancelled item, claimed or waiting, is kept as
// Cancelled; its claim is stale.
func testCancelledKept(e *env, s claimstore.Cleaner) {
	q := queue(0)
	waiting := e.enqueueOne(newItem(q, "waiting"))
	claimed := e.enqueueOne(newItem(q, "claimed"))
	c := e.claimReq(claim.ClaimRequest{Queue: q, Owner: "a", Limit: 2, Lease: long})
	require.Len(e, c, 2)
	e.settle(c[0], claim.SettleRetry, 0, "again") // waiting again
	require.NoError(e, s.Cancel(e.ctx, q, waiting.ID))
	before := e.clock.Now()
	require.NoError(e, s.Cancel(e.ctx, q, claimed.ID))
	after := e.clock.Now()
	for _, id := range []claim.ItemID{waiting.ID, claimed.ID} {
		assert.Equal(e, claim.Cancelled, e.lookup(id).State, "a cancelled item is kept")
	}
	e.near(e.lookup(claimed.ID).FinishedAt, before, after, 0, "FinishedAt")
	e.stale(c[1], "claim of a cancelled item")
	assert.Equal(e, claim.Counts{Cancelled: 2}, e.counts(q))
	assert.Equal(e, []claim.ItemID{waiting.ID, claimed.ID}, itemIDs(e.list(claim.Query{Queue: q, State: claim.Cancelled, Limit: 10})))
	require.NoError(e, s.Cancel(e.ctx, q, claimed.ID), "Cancel of a cancelled item")
	e.claimNone(q)
	dead := e.deadItem(newItem(queue(1), "dead"))
	require.NoError(e, s.Cancel(e.ctx, queue(1), dead.ID))
	assert.Equal(e, claim.Cancelled, e.lookup(dead.ID).State, "a cancelled dead letter is kept as cancelled")
	assert.Equal(e, claim.Counts{Cancelled: 1}, e.counts(queue(1)))
	assert.Empty(e, e.list(claim.Query{Queue: queue(1), State: claim.Dead, Limit: 10}))
}

// testCleanAfterRetention: Clean removes a finished item once its state's
// retention has passed, and not before; the key it held is free then.
func testCleanAfterRetention(e *env, s claimstore.Cleaner) {
	q := queue(0)
	short := retained
	n := newItem(q, "done")
	n.Key = "k"
	done := e.enqueueOne(n)
	e.settle(e.claimOne(q, "a", long), claim.SettleComplete, 0, "")
	cancelled := e.enqueueOne(newItem(q, "cancelled"))
	require.NoError(e, s.Cancel(e.ctx, q, cancelled.ID))
	dead := e.deadItem(newItem(queue(1), "dead"))
	finished := e.lookup(done.ID).FinishedAt

	e.almost(finished.Add(short))
	assert.Equal(e, 0, e.clean(s, 10), "before the completed retention")
	e.lookup(done.ID)
	e.until(finished.Add(short))
	assert.Equal(e, 1, e.clean(s, 10), "the completed item's retention passed")
	e.gone(done.ID)
	e.lookup(cancelled.ID)
	again := e.enqueueOne(n)
	assert.NotEqual(e, done.ID, again.ID, "a cleaned item frees its key")

	e.until(e.lookup(cancelled.ID).FinishedAt.Add(2 * short))
	assert.Equal(e, 1, e.clean(s, 10), "the cancelled item's retention passed")
	e.gone(cancelled.ID)
	e.lookup(dead.ID)
	e.until(dead.DeadAt.Add(3 * short))
	assert.Equal(e, 1, e.clean(s, 10), "the dead letter's retention passed")
	e.gone(dead.ID)
	e.lookup(again.ID)
	assert.Equal(e, claim.Counts{Visible: 1}, e.counts(q))
}

// testCleanInBatches: Clean removes at most its limit, oldest first.
func testCleanInBatches(e *env, s claimstore.Cleaner) {
	q := queue(0)
	items := make([]claim.NewItem, 5)
	for i := range items {
		items[i] = newItem(q, "x")
	}
	e.enqueue(items...)
	var ids []claim.ItemID
	for range items {
		c := e.claimOne(q, "a", long)
		e.settle(c, claim.SettleComplete, 0, "")
		ids = append(ids, c.Item)
	}
	e.pass(retained)
	assert.Equal(e, 2, e.clean(s, 2))
	left := itemIDs(e.list(claim.Query{Queue: q, State: claim.Completed, Limit: 10}))
	assert.Equal(e, ids[2:], left, "Clean removes the oldest first")
	assert.Equal(e, 2, e.clean(s, 2))
	assert.Equal(e, 1, e.clean(s, 2))
	assert.Equal(e, 0, e.clean(s, 2))
	assert.Equal(e, claim.Counts{}, e.counts(q))
}

// testZeroRetention: with the zero Retention a completed or cancelled item
// is removed at once, and a dead letter is kept however long.
func testZeroRetention(e *env, s claimstore.Cleaner) {
	q := queue(0)
	it := e.enqueueOne(newItem(q, "done"))
	e.settle(e.claimOne(q, "a", long), claim.SettleComplete, 0, "")
	e.gone(it.ID)
	it = e.enqueueOne(newItem(q, "cancelled"))
	require.NoError(e, s.Cancel(e.ctx, q, it.ID))
	e.gone(it.ID)
	dead := e.deadItem(newItem(q, "dead"))
	e.pass(retained)
	assert.Equal(e, 0, e.clean(s, 10))
	assert.Equal(e, claim.Dead, e.lookup(dead.ID).State, "a dead letter is kept with no Dead retention")
}

// testCleanBadInput: Clean refuses a limit below 1 and a nil context.
func testCleanBadInput(e *env, s claimstore.Cleaner) {
	var nilCtx context.Context
	for _, limit := range []int{0, -1} {
		_, err := s.Clean(e.ctx, limit)
		requireInvalid(e, err, "Clean(%d)", limit)
	}
	_, err := s.Clean(nilCtx, 1)
	requireInvalid(e, err, "Clean with nil ctx")
}

// requireInvalid fails the clause unless err is a *lease.Error of code
// CodeInvalidArgument naming a field.
func requireInvalid(e *env, err error, format string, args ...any) {
	e.Helper()
	require.ErrorIs(e, err, lease.ErrInvalidArgument, append([]any{format}, args...)...)
	var le *lease.Error
	require.ErrorAs(e, err, &le, append([]any{format}, args...)...)
	assert.NotEmpty(e, le.Field, append([]any{format + ": Field names the bad input"}, args...)...)
}
