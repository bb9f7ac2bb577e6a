package claimtest

import (
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// testKeys: while an item with a key exists in its queue, whatever its
// state, Enqueue of the key returns that item and adds nothing, also within
// one batch; other queues have their own keys; once the item is completed
// or cancelled the key is free.
func testKeys(e *env) {
	q, other := queue(0), queue(1)
	keyed := func(queue, key, payload string) claim.NewItem {
		n := newItem(queue, payload)
		n.Key = key
		return n
	}
	first := e.enqueueOne(keyed(q, "k", "first"))
	assert.False(e, first.Duplicate, "a new item is no duplicate")
	again := e.enqueueOne(keyed(q, "k", "second"))
	assert.Equal(e, first.ID, again.ID, "Enqueue of an existing key returns its item")
	assert.True(e, again.Duplicate, "the existing item is marked a duplicate")
	assert.False(e, e.lookup(first.ID).Duplicate, "Duplicate is only an Enqueue's answer")
	assert.Equal(e, []byte("first"), again.Payload, "the existing item, not the new one")
	assert.Equal(e, claim.Counts{Visible: 1}, e.counts(q))
	elsewhere := e.enqueueOne(keyed(other, "k", "other"))
	assert.NotEqual(e, first.ID, elsewhere.ID, "keys are per queue")

	batch := e.enqueue(keyed(q, "k", "third"), keyed(q, "j", "j1"), keyed(q, "j", "j2"), newItem(q, "plain"))
	assert.Equal(e, first.ID, batch[0].ID, "an existing key in a batch")
	assert.Equal(e, batch[1].ID, batch[2].ID, "a key twice in one batch is one item")
	assert.Equal(e, []bool{true, false, true, false}, []bool{batch[0].Duplicate, batch[1].Duplicate, batch[2].Duplicate, batch[3].Duplicate},
		"Duplicate marks the items returned in place of new ones")
	assert.Equal(e, []byte("j1"), batch[2].Payload)
	assert.Equal(e, claim.Counts{Visible: 3}, e.counts(q))

	c := e.claimOne(q, "a", long) // the oldest: first
	require.Equal(e, first.ID, c.Item)
	x := e.enqueueOne(keyed(q, "k", "while claimed"))
	assert.Equal(e, first.ID, x.ID, "a claimed item keeps its key")
	assert.Equal(e, claim.Claimed, x.State, "the existing item as it is now")
	e.settle(c, claim.SettleDead, 0, "dead")
	assert.Equal(e, first.ID, e.enqueueOne(keyed(q, "k", "while dead")).ID, "a dead item keeps its key")
	_, err := e.s.RequeueDead(e.ctx, q, first.ID)
	require.NoError(e, err)
	for e.counts(q).Visible > 0 {
		e.settle(e.claimOne(q, "a", long), claim.SettleComplete, 0, "")
	}
	fresh := e.enqueueOne(keyed(q, "k", "fresh"))
	assert.NotEqual(e, first.ID, fresh.ID, "a completed item frees its key")
	assert.Equal(e, []byte("fresh"), fresh.Payload)
	require.NoError(e, e.s.Cancel(e.ctx, q, fresh.ID))
	assert.NotEqual(e, fresh.ID, e.enqueueOne(keyed(q, "k", "after cancel")).ID, "a cancelled item frees its key")
}

// testCancel: Cancel removes an item in any state; a cancelled claim is
// stale, and its Lost function, if the store calls it, gets ErrCancelled.
// An item that does not exist in that queue is not found.
func testCancel(e *env) {
	q := queue(0)
	vis := e.enqueueOne(newItem(q, "visible"))
	n := newItem(q, "delayed")
	n.Delay = long
	delayed := e.enqueueOne(n)
	require.NoError(e, e.s.Cancel(e.ctx, q, vis.ID), "Cancel of a visible item")
	require.NoError(e, e.s.Cancel(e.ctx, q, delayed.ID), "Cancel of a delayed item")
	e.gone(vis.ID)
	e.gone(delayed.ID)
	e.notFound("Cancel again", e.s.Cancel(e.ctx, q, vis.ID))

	dead := e.deadItem(newItem(q, "dead"))
	require.NoError(e, e.s.Cancel(e.ctx, q, dead.ID), "Cancel of a dead item")
	e.gone(dead.ID)

	it := e.enqueueOne(newItem(q, "claimed"))
	var rec lostRecorder
	got := e.claimReq(claim.ClaimRequest{Queue: q, Owner: "a", Limit: 1, Lease: long, Lost: rec.lost})
	require.Len(e, got, 1)
	c := got[0]
	e.notFound("Cancel in another queue", e.s.Cancel(e.ctx, queue(1), it.ID))
	assert.Equal(e, claim.Claimed, e.lookup(it.ID).State, "a refused Cancel changed the item")
	require.NoError(e, e.s.Cancel(e.ctx, q, it.ID), "Cancel of a claimed item")
	e.gone(it.ID)
	e.stale(c, "a cancelled claim")
	for _, call := range e.checkLost(&rec, c.Ref, "cancel") {
		assert.ErrorIs(e, call.cause, claim.ErrCancelled, "the cause of a cancelled claim's Lost")
	}
	e.claimNone(q)
	assert.Equal(e, claim.Counts{}, e.counts(q))
}

// testListLookupCounts: List pages through a queue in ID order, by state;
// Lookup and Counts agree with it; an unknown queue is empty and an unknown
// item not found.
func testListLookupCounts(e *env) {
	q := queue(0)
	e.enqueueOne(newItem(queue(1), "elsewhere"))
	dead := e.deadItem(newItem(q, "dead"))
	claimed := e.enqueueOne(newItem(q, "claimed"))
	e.claimOne(q, "a", long)
	n := newItem(q, "delayed")
	n.Delay = long
	delayed := e.enqueueOne(n)
	v1 := e.enqueueOne(newItem(q, "v1"))
	v2 := e.enqueueOne(newItem(q, "v2"))
	want := map[claim.State][]claim.ItemID{
		0:             {dead.ID, claimed.ID, delayed.ID, v1.ID, v2.ID},
		claim.Dead:    {dead.ID},
		claim.Claimed: {claimed.ID},
		claim.Delayed: {delayed.ID},
		claim.Visible: {v1.ID, v2.ID},
	}
	assert.IsIncreasing(e, want[0], "IDs are issued in increasing order")
	for state, ids := range want {
		got := e.list(claim.Query{Queue: q, State: state, Limit: 10})
		assert.Equal(e, ids, itemIDs(got), "List of state %v", state)
		for _, it := range got {
			assert.Empty(e, diffItem(e.lookup(it.ID), it), "Lookup(%d) and List agree", it.ID)
			if state != 0 {
				assert.Equal(e, state, it.State)
			}
		}
	}
	var paged []claim.ItemID
	var after claim.ItemID
	for {
		page := e.list(claim.Query{Queue: q, After: after, Limit: 2})
		require.LessOrEqual(e, len(page), 2, "List returns at most Limit items")
		if len(page) == 0 {
			break
		}
		paged = append(paged, itemIDs(page)...)
		after = page[len(page)-1].ID
	}
	assert.Equal(e, want[0], paged, "paging with After")
	assert.Equal(e, []claim.ItemID{v1.ID, v2.ID}, itemIDs(e.list(claim.Query{Queue: q, After: delayed.ID, Limit: 10})))
	assert.Equal(e, claim.Counts{Visible: 2, Delayed: 1, Claimed: 1, Dead: 1}, e.counts(q))
	assert.Equal(e, claim.Counts{}, e.counts("claimtest-unknown"), "an unknown queue has zero counts")
	assert.Empty(e, e.list(claim.Query{Queue: "claimtest-unknown", Limit: 10}))
	e.gone(v2.ID + 1000)
	// No item has ID 0: it is not an ID (see BadInput).
	_, err := e.s.Lookup(e.ctx, 0)
	assert.ErrorIs(e, err, lease.ErrInvalidArgument, "Lookup(0)")
}

// woken fails the clause unless ready is closed within wakeLimit.
func (e *env) woken(ready <-chan struct{}, what string) {
	e.Helper()
	select {
	case <-ready:
	case <-time.After(wakeLimit):
		e.Fatalf("Notify: %s did not close the channel within %v", what, wakeLimit)
	}
}

// testNotifyWakes: a Notify channel is closed by an enqueue, a delay that
// ends, a lost claim, a retry, a requeued dead letter, and Close; stop may
// be called whether or not it was closed.
func testNotifyWakes(e *env) {
	q := queue(0)
	ready, stop := e.s.Notify(q)
	e.enqueueOne(newItem(q, "x"))
	e.woken(ready, "an enqueue")
	stop()

	// Waits given up before anything happens leave nothing behind that
	// stops the next one from working.
	for range e.scale(1000, 100) {
		_, stop = e.s.Notify(queue(1))
		stop()
	}
	ready, stop = e.s.Notify(queue(1))
	e.enqueueOne(newItem(queue(1), "y"))
	e.woken(ready, "an enqueue after many stopped waits")
	stop()

	c := e.claimOne(q, "a", e.short())
	ready, stop = e.s.Notify(q)
	e.until(c.ExpiresAt)
	e.woken(ready, "a lost claim")
	stop()

	c = e.claimOne(q, "a", long)
	ready, stop = e.s.Notify(q)
	e.settle(c, claim.SettleRetry, 0, "retry")
	e.woken(ready, "a retry")
	stop()

	c = e.claimOne(q, "a", long)
	e.settle(c, claim.SettleSnooze, e.short(), "")
	ready, stop = e.s.Notify(q)
	e.until(e.lookup(c.Item).VisibleAt)
	e.woken(ready, "a delay that ended")
	stop()

	c = e.claimOne(q, "a", long)
	e.settle(c, claim.SettleDead, 0, "dead")
	ready, stop = e.s.Notify(q)
	_, err := e.s.RequeueDead(e.ctx, q, c.Item)
	require.NoError(e, err)
	e.woken(ready, "a requeued dead letter")
	stop()

	ready, stop = e.s.Notify(queue(2))
	defer stop()
	require.NoError(e, e.s.Close())
	e.woken(ready, "Close")
}

// testNoAlias: changing what the store returned, or what it was given,
// changes nothing in the store.
func testNoAlias(e *env) {
	q := queue(0)
	payload := []byte("payload")
	items := []claim.NewItem{{Queue: q, Payload: payload, MaxAttempts: 3}}
	got := e.enqueue(items...)
	payload[0] = 'X'
	got[0].Payload[1] = 'X'
	items[0].Queue = "changed"
	id := got[0].ID
	check := func(what string) {
		e.Helper()
		assert.Equal(e, []byte("payload"), e.lookup(id).Payload, "the payload after changing %s", what)
	}
	check("the enqueued payload and the returned one")

	c := e.claimOne(q, "a", long)
	c.Payload[0] = 'X'
	check("a claim's payload")
	e.settle(c, claim.SettleRetry, 0, "reason")

	x := e.lookup(id)
	x.Payload[0] = 'X'
	x.History[0].Reason = "changed"
	check("a looked-up item")
	for _, it := range e.list(claim.Query{Queue: q, Limit: 10}) {
		it.Payload[0] = 'X'
		it.History[0].Reason = "changed"
	}
	check("listed items")
	assert.Equal(e, "reason", e.lookup(id).History[0].Reason, "the history after changing returned copies")

	e.settle(e.claimOne(q, "a", long), claim.SettleDead, 0, "dead")
	r, err := e.s.RequeueDead(e.ctx, q, id)
	require.NoError(e, err)
	r.Payload[0] = 'X'
	r.History[0].Reason = "changed"
	check("a requeued item")
	assert.Equal(e, "reason", e.lookup(id).History[0].Reason)
}

// testClosed: after Close every call fails with ErrClosed, Close again
// succeeds, Notify's channel is closed, and no Lost function is called.
func testClosed(e *env) {
	q := queue(0)
	e.enqueue(newItem(q, "a"), newItem(q, "b"))
	var rec lostRecorder
	got := e.claimReq(claim.ClaimRequest{Queue: q, Owner: "a", Limit: 1, Lease: e.short(), Lost: rec.lost})
	require.Len(e, got, 1)
	c := got[0]
	require.NoError(e, e.s.Close(), "Close")
	require.NoError(e, e.s.Close(), "Close again")
	closed := func(what string, err error) {
		e.Helper()
		assert.ErrorIs(e, err, lease.ErrClosed, "%s after Close", what)
	}
	_, err := e.s.Enqueue(e.ctx, []claim.NewItem{newItem(q, "c")})
	closed("Enqueue", err)
	_, err = e.s.Claim(e.ctx, claim.ClaimRequest{Queue: q, Owner: "b", Limit: 1, Lease: long})
	closed("Claim", err)
	_, err = e.s.Extend(e.ctx, c.Ref, long)
	closed("Extend", err)
	closed("Settle", e.s.Settle(e.ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleComplete}))
	closed("Cancel", e.s.Cancel(e.ctx, q, c.Item))
	_, err = e.s.Lookup(e.ctx, c.Item)
	closed("Lookup", err)
	_, err = e.s.List(e.ctx, claim.Query{Queue: q, Limit: 1})
	closed("List", err)
	_, err = e.s.Counts(e.ctx, q)
	closed("Counts", err)
	_, err = e.s.RequeueDead(e.ctx, q, c.Item)
	closed("RequeueDead", err)
	closed("DeleteDead", e.s.DeleteDead(e.ctx, q, c.Item))
	ready, stop := e.s.Notify(q)
	defer stop()
	e.woken(ready, "Notify after Close")
	if e.fake() {
		e.adv.Advance(2 * e.short())
		assert.Empty(e, rec.get(), "Lost called after Close returned")
	}
}
