package claimstore_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim/claimstore"
)

// sqlStore is a store with the limits of a database's columns.
var sqlStore = claimstore.Checker{Package: "mystore", MaxNameLen: 8, TextOnly: true, MaxAttempts: math.MaxInt32, MaxID: math.MaxInt64}

// anyStore applies package claim's rules alone, as claimstore.Memory does.
var anyStore = claimstore.Checker{Package: "mystore"}

// requireInvalid checks that err refuses field of op, raised by mystore.
func requireInvalid(t *testing.T, err error, op, field string) {
	t.Helper()
	require.ErrorIs(t, err, lease.ErrInvalidArgument)
	var le *lease.Error
	require.True(t, errors.As(err, &le))
	assert.Equal(t, lease.CodeInvalidArgument, le.Code)
	assert.Equal(t, "mystore", le.Package)
	assert.Equal(t, op, le.Op)
	assert.Equal(t, field, le.Field)
	assert.True(t, strings.HasPrefix(err.Error(), "mystore: "), err.Error())
}

func goodItem() claimstore.NewItem {
	return claimstore.NewItem{Queue: "q", Key: "k", Kind: "kind", MaxAttempts: 3, Priority: 1, Tags: []string{"a"}}
}

func TestCheckerNewItem(t *testing.T) {
	require.NoError(t, sqlStore.NewItem("enqueue", 0, goodItem()))
	require.NoError(t, sqlStore.NewItem("enqueue", 0, claimstore.NewItem{Queue: "q", MaxAttempts: 1}), "key and kind are optional")
	for _, c := range []struct {
		name  string
		edit  func(*claimstore.NewItem)
		field string
	}{
		{"empty queue", func(n *claimstore.NewItem) { n.Queue = "" }, "items[4].queue"},
		{"long queue", func(n *claimstore.NewItem) { n.Queue = "123456789" }, "items[4].queue"},
		{"queue not UTF-8", func(n *claimstore.NewItem) { n.Queue = "\xff" }, "items[4].queue"},
		{"key with NUL", func(n *claimstore.NewItem) { n.Key = "a\x00" }, "items[4].key"},
		{"long kind", func(n *claimstore.NewItem) { n.Kind = "123456789" }, "items[4].kind"},
		{"negative delay", func(n *claimstore.NewItem) { n.Delay = -time.Second }, "items[4].delay"},
		{"no attempts", func(n *claimstore.NewItem) { n.MaxAttempts = 0 }, "items[4].max_attempts"},
		{"too many attempts", func(n *claimstore.NewItem) { n.MaxAttempts = math.MaxInt32 + 1 }, "items[4].max_attempts"},
		{"priority", func(n *claimstore.NewItem) { n.Priority = claimstore.MaxPriority + 1 }, "items[4].priority"},
		{"negative timeout", func(n *claimstore.NewItem) { n.Timeout = -1 }, "items[4].timeout"},
		{"timeout", func(n *claimstore.NewItem) { n.Timeout = claimstore.MaxTimeout + 1 }, "items[4].timeout"},
		{"too many tags", func(n *claimstore.NewItem) { n.Tags = make([]string, claimstore.MaxTags+1) }, "items[4].tags"},
		{"empty tag", func(n *claimstore.NewItem) { n.Tags = []string{"a", ""} }, "items[4].tags[1]"},
		{"long tag", func(n *claimstore.NewItem) { n.Tags = []string{strings.Repeat("t", claimstore.MaxTagLen+1)} }, "items[4].tags[0]"},
		{"tag not UTF-8", func(n *claimstore.NewItem) { n.Tags = []string{"\xff"} }, "items[4].tags[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			it := goodItem()
			c.edit(&it)
			requireInvalid(t, sqlStore.NewItem("enqueue", 4, it), "enqueue", c.field)
		})
	}
	t.Run("no limits of its own", func(t *testing.T) {
		it := goodItem()
		it.Queue, it.Key, it.Kind, it.MaxAttempts = "\xff"+strings.Repeat("q", 2000), "a\x00", "\xff", math.MaxInt32+1
		require.NoError(t, anyStore.NewItem("enqueue", 0, it))
		it.MaxAttempts = 0
		requireInvalid(t, anyStore.NewItem("enqueue", 0, it), "enqueue", "items[0].max_attempts")
	})
}

func TestCheckerClaimRequest(t *testing.T) {
	good := claimstore.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: time.Second}
	require.NoError(t, sqlStore.ClaimRequest("claim", good))
	bad := good
	bad.Owner = ""
	requireInvalid(t, sqlStore.ClaimRequest("claim", bad), "claim", "owner")
	bad = good
	bad.Queue = "123456789"
	requireInvalid(t, sqlStore.ClaimRequest("claim", bad), "claim", "queue")
	bad = good
	bad.Limit = 0
	requireInvalid(t, sqlStore.ClaimRequest("claim", bad), "claim", "limit")
	bad = good
	bad.Lease = 0
	requireInvalid(t, sqlStore.ClaimRequest("claim", bad), "claim", "lease_duration")
}

func TestCheckerRef(t *testing.T) {
	require.NoError(t, sqlStore.Ref("extend", claimstore.Ref{Item: 1, Token: 1}))
	requireInvalid(t, sqlStore.Ref("extend", claimstore.Ref{}), "extend", "ref")
	requireInvalid(t, sqlStore.Ref("extend", claimstore.Ref{Item: 1}), "extend", "ref")
	requireInvalid(t, sqlStore.Ref("extend", claimstore.Ref{Item: math.MaxInt64 + 1, Token: 1}), "extend", "ref")
	requireInvalid(t, sqlStore.Ref("extend", claimstore.Ref{Item: 1, Token: math.MaxInt64 + 1}), "extend", "ref")
	require.NoError(t, anyStore.Ref("extend", claimstore.Ref{Item: math.MaxUint64, Token: math.MaxUint64}))
}

func TestCheckerExtend(t *testing.T) {
	require.NoError(t, sqlStore.Extend("extend", claimstore.Ref{Item: 1, Token: 1}, time.Second))
	requireInvalid(t, sqlStore.Extend("extend", claimstore.Ref{Item: 1}, time.Second), "extend", "ref")
	requireInvalid(t, sqlStore.Extend("extend", claimstore.Ref{Item: 1, Token: 1}, 0), "extend", "lease_duration")
}

func TestCheckerSettlement(t *testing.T) {
	good := claimstore.Settlement{Ref: claimstore.Ref{Item: 1, Token: 1}, How: claimstore.SettleRetry, After: time.Second, Reason: "r"}
	require.NoError(t, sqlStore.Settlement("settle", good))
	bad := good
	bad.Ref = claimstore.Ref{}
	requireInvalid(t, sqlStore.Settlement("settle", bad), "settle", "ref")
	for _, how := range []claimstore.Settle{0, claimstore.SettleSnooze + 1} {
		bad = good
		bad.How = how
		requireInvalid(t, sqlStore.Settlement("settle", bad), "settle", "how")
	}
	bad = good
	bad.After = -1
	requireInvalid(t, sqlStore.Settlement("settle", bad), "settle", "after")
	bad = good
	bad.Reason = "\xff"
	requireInvalid(t, sqlStore.Settlement("settle", bad), "settle", "reason")
	require.NoError(t, anyStore.Settlement("settle", bad), "any bytes, without TextOnly")
}

func TestCheckerItem(t *testing.T) {
	require.NoError(t, sqlStore.Item("cancel", "q", 1))
	requireInvalid(t, sqlStore.Item("cancel", "", 1), "cancel", "queue")
	requireInvalid(t, sqlStore.Item("cancel", "q", 0), "cancel", "id")
	requireInvalid(t, sqlStore.Item("cancel", "q", math.MaxInt64+1), "cancel", "id")
}

func TestCheckerQuery(t *testing.T) {
	good := claimstore.Query{Queue: "q", State: claimstore.Dead, Limit: 10, Kind: "k", Tag: "t"}
	require.NoError(t, sqlStore.Query("list", good))
	require.NoError(t, sqlStore.Query("list", claimstore.Query{Queue: "q", Limit: 1}), "state 0 is every state")
	for _, c := range []struct {
		field string
		edit  func(*claimstore.Query)
	}{
		{"queue", func(q *claimstore.Query) { q.Queue = "" }},
		{"state", func(q *claimstore.Query) { q.State = claimstore.Cancelled + 1 }},
		{"limit", func(q *claimstore.Query) { q.Limit = 0 }},
		{"kind", func(q *claimstore.Query) { q.Kind = "\x00" }},
		{"tag", func(q *claimstore.Query) { q.Tag = "\xff" }},
	} {
		bad := good
		c.edit(&bad)
		requireInvalid(t, sqlStore.Query("list", bad), "list", c.field)
	}
}

func TestCheckerQueueQuery(t *testing.T) {
	require.NoError(t, sqlStore.QueueQuery("queues", claimstore.QueueQuery{Limit: 1}))
	requireInvalid(t, sqlStore.QueueQuery("queues", claimstore.QueueQuery{}), "queues", "limit")
	requireInvalid(t, sqlStore.QueueQuery("queues", claimstore.QueueQuery{Limit: 1, After: "\xff"}), "queues", "after")
}

func TestCheckerLimit(t *testing.T) {
	require.NoError(t, sqlStore.Limit("clean", 1))
	requireInvalid(t, sqlStore.Limit("clean", 0), "clean", "limit")
}

func TestCheckerNameTextInvalid(t *testing.T) {
	require.NoError(t, sqlStore.Name("op", "f", "12345678"))
	requireInvalid(t, sqlStore.Name("op", "f", ""), "op", "f")
	requireInvalid(t, sqlStore.Name("op", "f", "123456789"), "op", "f")
	require.NoError(t, sqlStore.Text("op", "f", ""), "empty text is text")
	requireInvalid(t, sqlStore.Text("op", "f", "a\x00b"), "op", "f")
	require.NoError(t, anyStore.Text("op", "f", "a\x00b"))
	requireInvalid(t, sqlStore.Invalid("op", "f", "why"), "op", "f")
}

func TestCheckerNewItems(t *testing.T) {
	require.NoError(t, sqlStore.NewItems("enqueue", nil))
	require.NoError(t, sqlStore.NewItems("enqueue", []claimstore.NewItem{goodItem(), goodItem()}))
	bad := goodItem()
	bad.Priority = -1
	requireInvalid(t, sqlStore.NewItems("enqueue", []claimstore.NewItem{goodItem(), bad, {}}), "enqueue", "items[1].priority")
}

func TestCheckerID(t *testing.T) {
	require.NoError(t, sqlStore.ID("lookup", 1))
	requireInvalid(t, sqlStore.ID("lookup", 0), "lookup", "id")
	requireInvalid(t, sqlStore.ID("lookup", math.MaxInt64+1), "lookup", "id")
	require.NoError(t, anyStore.ID("lookup", math.MaxUint64))
}

func TestCheckerStaleClaim(t *testing.T) {
	err := sqlStore.StaleClaim("settle", claimstore.Ref{Item: 7, Token: 42})
	require.ErrorIs(t, err, lease.ErrStaleUse)
	assert.Equal(t, "mystore", err.Package)
	assert.Equal(t, "settle", err.Op)
	assert.Equal(t, lease.ID(42), err.LeaseID)
	assert.Contains(t, err.Error(), "item 7")
	assert.True(t, strings.HasPrefix(err.Error(), "mystore: "), err.Error())
}
