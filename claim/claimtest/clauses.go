package claimtest

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// testBadInput: bad input to every method, one field at a time, is refused
// with a *lease.Error of code CodeInvalidArgument that names the field, and
// nothing changes: not even the valid items of a batch, nor a live claim
// the call named.
func testBadInput(e *env) {
	var nilCtx context.Context
	q, qv, qd := queue(0), queue(1), queue(2)
	e.enqueueOne(newItem(q, "claimed"))
	c := e.claimOne(q, "a", long)
	delayed := newItem(q, "delayed")
	delayed.Delay = long
	d := e.enqueueOne(delayed)
	e.enqueueOne(newItem(qv, "visible"))
	e.enqueueOne(newItem(qd, "dead"))
	e.settle(e.claimOne(qd, "a", long), claim.SettleDead, 0, "dead")
	dead := e.list(claim.Query{Queue: qd, Limit: 1})[0]
	before := map[string]claim.Counts{q: e.counts(q), qv: e.counts(qv), qd: e.counts(qd)}

	ok := newItem(qv, "valid")
	batch := func(change func(*claim.NewItem)) []claim.NewItem {
		bad := newItem(qv, "bad")
		change(&bad)
		return []claim.NewItem{ok, bad}
	}
	req := claim.ClaimRequest{Queue: qv, Owner: "b", Limit: 1, Lease: long}
	claimWith := func(change func(*claim.ClaimRequest)) func() error {
		return func() error {
			r := req
			change(&r)
			_, err := e.s.Claim(e.ctx, r)
			return err
		}
	}
	settleWith := func(change func(*claim.Settlement)) func() error {
		return func() error {
			s := claim.Settlement{Ref: c.Ref, How: claim.SettleComplete}
			change(&s)
			return e.s.Settle(e.ctx, s)
		}
	}
	enqueueWith := func(change func(*claim.NewItem)) func() error {
		return func() error { _, err := e.s.Enqueue(e.ctx, batch(change)); return err }
	}
	listWith := func(change func(*claim.Query)) func() error {
		return func() error {
			query := claim.Query{Queue: q, Limit: 10}
			change(&query)
			_, err := e.s.List(e.ctx, query)
			return err
		}
	}
	cases := []struct {
		what string
		call func() error
	}{
		{"Enqueue nil ctx", func() error { _, err := e.s.Enqueue(nilCtx, []claim.NewItem{ok}); return err }},
		{"Enqueue empty Queue", enqueueWith(func(n *claim.NewItem) { n.Queue = "" })},
		{"Enqueue negative Delay", enqueueWith(func(n *claim.NewItem) { n.Delay = -time.Second })},
		{"Enqueue zero MaxAttempts", enqueueWith(func(n *claim.NewItem) { n.MaxAttempts = 0 })},
		{"Enqueue negative MaxAttempts", enqueueWith(func(n *claim.NewItem) { n.MaxAttempts = -1 })},
		{"Enqueue negative Priority", enqueueWith(func(n *claim.NewItem) { n.Priority = -1 })},
		{"Enqueue Priority above MaxPriority", enqueueWith(func(n *claim.NewItem) { n.Priority = claim.MaxPriority + 1 })},
		{"Enqueue negative Timeout", enqueueWith(func(n *claim.NewItem) { n.Timeout = -time.Second })},
		{"Enqueue too many Tags", enqueueWith(func(n *claim.NewItem) { n.Tags = make([]string, claim.MaxTags+1); fill(n.Tags) })},
		{"Enqueue empty tag", enqueueWith(func(n *claim.NewItem) { n.Tags = []string{"a", ""} })},
		{"Enqueue tag too long", enqueueWith(func(n *claim.NewItem) { n.Tags = []string{strings.Repeat("t", claim.MaxTagLen+1)} })},
		{"Enqueue KeyStates without Key", enqueueWith(func(n *claim.NewItem) { n.Key, n.KeyStates = "", []claim.State{claim.Visible} })},
		{"Enqueue KeyStates zero State", enqueueWith(func(n *claim.NewItem) { n.Key, n.KeyStates = "bad", []claim.State{claim.Visible, 0} })},
		{"Enqueue KeyStates unknown State", enqueueWith(func(n *claim.NewItem) { n.Key, n.KeyStates = "bad", []claim.State{claim.Cancelled + 1} })},
		{"Claim nil ctx", func() error { _, err := e.s.Claim(nilCtx, req); return err }},
		{"Claim empty Queue", claimWith(func(r *claim.ClaimRequest) { r.Queue = "" })},
		{"Claim empty Owner", claimWith(func(r *claim.ClaimRequest) { r.Owner = "" })},
		{"Claim zero Limit", claimWith(func(r *claim.ClaimRequest) { r.Limit = 0 })},
		{"Claim negative Limit", claimWith(func(r *claim.ClaimRequest) { r.Limit = -1 })},
		{"Claim zero Lease", claimWith(func(r *claim.ClaimRequest) { r.Lease = 0 })},
		{"Claim negative Lease", claimWith(func(r *claim.ClaimRequest) { r.Lease = -time.Second })},
		{"Extend nil ctx", func() error { _, err := e.s.Extend(nilCtx, c.Ref, long); return err }},
		{"Extend zero Ref", func() error { _, err := e.s.Extend(e.ctx, claim.Ref{}, long); return err }},
		{"Extend zero lease", func() error { _, err := e.s.Extend(e.ctx, c.Ref, 0); return err }},
		{"Extend negative lease", func() error { _, err := e.s.Extend(e.ctx, c.Ref, -time.Second); return err }},
		{"Settle nil ctx", func() error { return e.s.Settle(nilCtx, claim.Settlement{Ref: c.Ref, How: claim.SettleComplete}) }},
		{"Settle zero Ref", settleWith(func(s *claim.Settlement) { s.Ref = claim.Ref{} })},
		{"Settle zero How", settleWith(func(s *claim.Settlement) { s.How = 0 })},
		{"Settle unknown How", settleWith(func(s *claim.Settlement) { s.How = claim.SettleSnooze + 1 })},
		{"Settle retry negative After", settleWith(func(s *claim.Settlement) { s.How, s.After = claim.SettleRetry, -time.Second })},
		{"Settle snooze negative After", settleWith(func(s *claim.Settlement) { s.How, s.After = claim.SettleSnooze, -time.Second })},
		{"Cancel nil ctx", func() error { return e.s.Cancel(nilCtx, q, d.ID) }},
		{"Cancel empty queue", func() error { return e.s.Cancel(e.ctx, "", d.ID) }},
		{"Lookup nil ctx", func() error { _, err := e.s.Lookup(nilCtx, d.ID); return err }},
		{"List nil ctx", func() error { _, err := e.s.List(nilCtx, claim.Query{Queue: q, Limit: 10}); return err }},
		{"List empty Queue", listWith(func(query *claim.Query) { query.Queue = "" })},
		{"List zero Limit", listWith(func(query *claim.Query) { query.Limit = 0 })},
		{"List negative Limit", listWith(func(query *claim.Query) { query.Limit = -1 })},
		{"List unknown State", listWith(func(query *claim.Query) { query.State = claim.Cancelled + 1 })},
		{"Counts nil ctx", func() error { _, err := e.s.Counts(nilCtx, q); return err }},
		{"Counts empty queue", func() error { _, err := e.s.Counts(e.ctx, ""); return err }},
		{"RequeueDead nil ctx", func() error { _, err := e.s.RequeueDead(nilCtx, qd, dead.ID); return err }},
		{"RequeueDead empty queue", func() error { _, err := e.s.RequeueDead(e.ctx, "", dead.ID); return err }},
		{"DeleteDead nil ctx", func() error { return e.s.DeleteDead(nilCtx, qd, dead.ID) }},
		{"DeleteDead empty queue", func() error { return e.s.DeleteDead(e.ctx, "", dead.ID) }},
	}
	for _, tc := range cases {
		err := tc.call()
		if !assert.ErrorIs(e, err, lease.ErrInvalidArgument, tc.what) {
			continue
		}
		var le *lease.Error
		if assert.True(e, errors.As(err, &le), "%s: the error is a *lease.Error", tc.what) {
			assert.Equal(e, lease.CodeInvalidArgument, le.Code, "%s: Code", tc.what)
			assert.NotEmpty(e, le.Field, "%s: Field names the bad input", tc.what)
		}
	}
	// No item has ID 0: every store refuses it as bad input naming "id",
	// whatever the call, rather than as an item it does not have.
	for _, tc := range []struct {
		what string
		call func() error
	}{
		{"Lookup ID 0", func() error { _, err := e.s.Lookup(e.ctx, 0); return err }},
		{"Cancel ID 0", func() error { return e.s.Cancel(e.ctx, q, 0) }},
		{"RequeueDead ID 0", func() error { _, err := e.s.RequeueDead(e.ctx, qd, 0); return err }},
		{"DeleteDead ID 0", func() error { return e.s.DeleteDead(e.ctx, qd, 0) }},
	} {
		err := tc.call()
		var le *lease.Error
		if assert.ErrorIs(e, err, lease.ErrInvalidArgument, tc.what) && assert.True(e, errors.As(err, &le), tc.what) {
			assert.Equal(e, "id", le.Field, "%s: Field", tc.what)
		}
	}
	// Nothing changed: the counts, the delayed and dead items, the claim.
	for qq, want := range before {
		assert.Equal(e, want, e.counts(qq), "Counts(%q) after bad input", qq)
	}
	assert.Empty(e, diffItem(e.lookup(d.ID), d), "the delayed item after bad input")
	assert.Empty(e, diffItem(e.lookup(dead.ID), dead), "the dead item after bad input")
	e.claimNone(q)
	_, err := e.s.Extend(e.ctx, c.Ref, long)
	require.NoError(e, err, "the claim is still live after bad input")
}

// testEnqueueVisible: an item without delay is stored as given, visible at
// once, and its claim carries its fields.
func testEnqueueVisible(e *env) {
	q := queue(0)
	n := claim.NewItem{Queue: q, Payload: []byte("payload"), Key: "key", MaxAttempts: 5, Priority: 3, Timeout: 7 * time.Second}
	before := e.clock.Now()
	it := e.enqueueOne(n)
	after := e.clock.Now()
	assert.Equal(e, claim.Visible, it.State, "State")
	assert.Equal(e, []byte("payload"), it.Payload, "Payload")
	assert.Equal(e, "key", it.Key, "Key")
	assert.Equal(e, 5, it.MaxAttempts, "MaxAttempts")
	assert.Equal(e, 3, it.Priority, "Priority")
	assert.Equal(e, 7*time.Second, it.Timeout, "Timeout")
	assert.Zero(e, it.Attempts, "Attempts")
	assert.Empty(e, it.History, "History")
	assert.True(e, it.DeadAt.IsZero(), "DeadAt")
	e.near(it.EnqueuedAt, before, after, 0, "EnqueuedAt")
	assert.True(e, it.VisibleAt.Equal(it.EnqueuedAt), "VisibleAt %v is EnqueuedAt %v", it.VisibleAt, it.EnqueuedAt)
	assert.Empty(e, diffItem(e.lookup(it.ID), it), "Lookup returns what Enqueue did")
	assert.Equal(e, claim.Counts{Visible: 1}, e.counts(q))

	c := e.claimOne(q, "a", long)
	assert.Equal(e, it.ID, c.Item)
	assert.Equal(e, []byte("payload"), c.Payload, "Claim.Payload")
	assert.Equal(e, 1, c.Attempt, "Claim.Attempt")
	assert.Equal(e, 5, c.MaxAttempts, "Claim.MaxAttempts")
	assert.Equal(e, 3, c.Priority, "Claim.Priority")
	assert.Equal(e, 7*time.Second, c.Timeout, "Claim.Timeout")
	got := e.lookup(it.ID)
	assert.Equal(e, claim.Claimed, got.State, "State once claimed")
	assert.Equal(e, 1, got.Attempts, "Attempts once claimed")
	assert.True(e, got.VisibleAt.IsZero(), "VisibleAt of a claimed item is zero")
	assert.Equal(e, claim.Counts{Claimed: 1}, e.counts(q))

	// A batch is stored whole, each item with its own ID.
	batch := e.enqueue(newItem(q, "x"), newItem(q, "y"), newItem(q, "z"))
	ids := itemIDs(batch)
	slices.Sort(ids)
	assert.Len(e, slices.Compact(ids), 3, "a batch's items have distinct IDs")
	assert.Equal(e, claim.Counts{Visible: 3, Claimed: 1}, e.counts(q))
}

// testDelay: a delayed item is not claimable before its VisibleAt (with a
// fake clock: not a nanosecond before) and is from then on.
func testDelay(e *env) {
	q := queue(0)
	n := newItem(q, "later")
	n.Delay = e.short()
	before := e.clock.Now()
	it := e.enqueueOne(n)
	after := e.clock.Now()
	assert.Equal(e, claim.Delayed, it.State, "State of a delayed item")
	e.near(it.VisibleAt, before, after, n.Delay, "VisibleAt")
	assert.Equal(e, claim.Counts{Delayed: 1}, e.counts(q))
	e.due(q, it.VisibleAt)
	assert.Equal(e, claim.Visible, e.lookup(it.ID).State, "State once due")
	assert.Equal(e, claim.Counts{Visible: 1}, e.counts(q))
	assert.Equal(e, it.ID, e.claimOne(q, "a", long).Item)
}

// testClaimLimit: Claim takes at most its limit, and no item twice.
func testClaimLimit(e *env) {
	q := queue(0)
	var items []claim.NewItem
	for i := range 5 {
		items = append(items, newItem(q, string(rune('a'+i))))
	}
	want := itemIDs(e.enqueue(items...))
	first := e.claim(q, "a", 2, long)
	require.Len(e, first, 2, "Claim with limit 2 of 5 items")
	rest := e.claim(q, "b", 10, long)
	require.Len(e, rest, 3, "Claim with limit 10 of the 3 left")
	e.claimNone(q)
	got := append(claimIDs(first), claimIDs(rest)...)
	assert.ElementsMatch(e, want, got, "every item claimed once")
	assert.Equal(e, claim.Counts{Claimed: 5}, e.counts(q))
}

// testClaimOrder: Claim takes lower Priority first, then earlier
// VisibleAt, then lower ID; a batch takes the first of that order.
func testClaimOrder(e *env) {
	q := queue(0)
	step := e.short() / 4
	if !e.fake() {
		step = 200 * time.Millisecond
	}
	with := func(payload string, priority int, delay time.Duration) claim.NewItem {
		n := newItem(q, payload)
		n.Priority, n.Delay = priority, delay
		return n
	}
	// Enqueued in an order that no single rule explains.
	a := e.enqueueOne(with("a", 0, 3*step))
	b := e.enqueueOne(with("b", 0, step))
	late := e.enqueueOne(with("late", 1, 0))
	c := e.enqueueOne(with("c", 0, 2*step))
	first := e.enqueueOne(with("first", 0, 0))
	second := e.enqueueOne(with("second", 0, 0))
	low := e.enqueueOne(with("low", 2, 0))
	e.pass(3 * step)
	items := []claim.Item{a, b, late, c, first, second, low}
	if e.fake() {
		// At one instant, ties of priority and VisibleAt go by ID.
		items = append(items, e.enqueueOne(with("x", 0, 0)), e.enqueueOne(with("y", 0, 0)))
	}
	// The order follows the VisibleAt the store gave each item: on a real
	// clock, a slow enqueue may put c's after a's.
	slices.SortFunc(items, func(x, y claim.Item) int {
		return cmp.Or(cmp.Compare(x.Priority, y.Priority), x.VisibleAt.Compare(y.VisibleAt), cmp.Compare(x.ID, y.ID))
	})
	want := make([]claim.ItemID, len(items))
	for i, it := range items {
		want[i] = it.ID
	}
	batch := e.claim(q, "a", 3, long)
	assert.ElementsMatch(e, want[:3], claimIDs(batch), "Claim with limit 3 takes the first three in claim order")
	var got []claim.ItemID
	for range want[3:] {
		got = append(got, e.claimOne(q, "a", long).Item)
	}
	assert.Equal(e, want[3:], got, "claims one at a time follow priority, VisibleAt, ID")
}

// testQueuesApart: queues share nothing but the ID sequence.
func testQueuesApart(e *env) {
	a, b := queue(0), queue(1)
	x := e.enqueueOne(newItem(a, "x"))
	e.claimNone(b)
	assert.Equal(e, claim.Counts{}, e.counts(b))
	assert.Empty(e, e.list(claim.Query{Queue: b, Limit: 10}))
	e.enqueueOne(newItem(b, "y"))
	assert.Equal(e, x.ID, e.claimOne(a, "o", long).Item)
	e.claimNone(a)
	assert.Equal(e, claim.Counts{Claimed: 1}, e.counts(a))
	assert.Equal(e, claim.Counts{Visible: 1}, e.counts(b))
	assert.ErrorIs(e, e.s.Cancel(e.ctx, b, x.ID), claim.ErrNotFound, "Cancel names the item's queue")
}

// fill gives each of tags a distinct valid value.
func fill(tags []string) {
	for i := range tags {
		tags[i] = "t" + strconv.Itoa(i)
	}
}
