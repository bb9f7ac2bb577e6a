package claimtest

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// testKeysByState: an item with KeyStates is blocked by an existing item
// with its key only while that item is in one of those states; an item in
// another state gives its key up, stays as it was without a Key, and the
// new item is added with the key. Without KeyStates every state blocks.
// Within one Enqueue call a key is judged once, by the first item with
// it.
func testKeysByState(e *env) {
	q, qd := queue(0), queue(1)
	in := func(queue, key, payload string, states ...claim.State) claim.NewItem {
		n := newItem(queue, payload)
		n.Key, n.KeyStates = key, states
		return n
	}
	keyed := func(key, payload string, states ...claim.State) claim.NewItem { return in(q, key, payload, states...) }
	waiting := []claim.State{claim.Visible, claim.Delayed}
	first := e.enqueueOne(keyed("k", "first"))
	again := e.enqueueOne(keyed("k", "again", waiting...))
	assert.Equal(e, first.ID, again.ID, "a visible item blocks an enqueue whose KeyStates hold Visible")
	assert.True(e, again.Duplicate)

	c := e.claimOne(q, "a", long)
	require.Equal(e, first.ID, c.Item)
	second := e.enqueueOne(keyed("k", "second", waiting...))
	assert.NotEqual(e, first.ID, second.ID, "a claimed item does not block KeyStates without Claimed")
	assert.False(e, second.Duplicate)
	assert.Equal(e, "k", second.Key)
	assert.Equal(e, []byte("second"), second.Payload)
	old := e.lookup(first.ID)
	assert.Equal(e, claim.Claimed, old.State, "the old item stays as it was")
	assert.Empty(e, old.Key, "without its key")
	assert.Equal(e, claim.Counts{Visible: 1, Claimed: 1}, e.counts(q))
	e.settle(c, claim.SettleComplete, 0, "") // its claim is as live as before
	assert.Equal(e, second.ID, e.enqueueOne(keyed("k", "plain")).ID, "without KeyStates every state blocks")
	assert.Equal(e, second.ID, e.enqueueOne(keyed("k", "claimed only", claim.Claimed, claim.Visible)).ID)

	n := in(qd, "d", "to die")
	doomed := e.deadItem(n)
	assert.Equal(e, doomed.ID, e.enqueueOne(in(qd, "d", "blocked", claim.Dead)).ID, "a dead item blocks KeyStates with Dead")
	revived := e.enqueueOne(in(qd, "d", "revived", claim.Visible, claim.Delayed, claim.Claimed, claim.Completed))
	assert.NotEqual(e, doomed.ID, revived.ID, "a dead item does not block KeyStates without Dead")
	gone := e.lookup(doomed.ID)
	assert.Empty(e, gone.Key)
	assert.Equal(e, claim.Dead, gone.State, "the dead item stays")
	assert.Equal(e, []claim.ItemID{doomed.ID}, itemIDs(e.list(claim.Query{Queue: qd, State: claim.Dead, Limit: 10})))
	assert.Equal(e, revived.ID, e.enqueueOne(in(qd, "d", "again", claim.Dead, claim.Visible)).ID)
	fresh := e.enqueueOne(in(qd, "d", "fresh", claim.Dead))
	assert.NotEqual(e, revived.ID, fresh.ID, "a visible item does not block KeyStates of Dead alone")
	assert.Equal(e, claim.Counts{Visible: 2, Dead: 1}, e.counts(qd))

	batch := e.enqueue(keyed("b", "b1", claim.Claimed), keyed("b", "b2", claim.Claimed))
	assert.Equal(e, batch[0].ID, batch[1].ID, "within one call an earlier item's key blocks whatever the states")
	assert.True(e, batch[1].Duplicate)
	assert.Equal(e, "b", e.lookup(batch[0].ID).Key)
	batch = e.enqueue(keyed("b", "b3"), keyed("b", "b4", claim.Claimed))
	assert.Equal(e, []claim.ItemID{batch[0].ID, batch[0].ID}, itemIDs(batch), "the first item with the key judges it")
	assert.Equal(e, "b", e.lookup(batch[0].ID).Key)
	b1 := batch[0].ID
	batch = e.enqueue(keyed("b", "b5", claim.Claimed), keyed("b", "b6"))
	assert.False(e, batch[0].Duplicate, "a visible item does not block KeyStates of Claimed alone")
	assert.NotEqual(e, b1, batch[0].ID)
	assert.Empty(e, e.lookup(b1).Key)
	assert.Equal(e, batch[0].ID, batch[1].ID, "the later item gets what the first added")
	assert.Equal(e, claim.Counts{Visible: 3, Completed: e.counts(q).Completed}, e.counts(q))
}
