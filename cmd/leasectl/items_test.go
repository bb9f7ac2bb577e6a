package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// id formats an item's ID as the commands take it.
func id(it claim.Item) string { return strconv.FormatUint(uint64(it.ID), 10) }

// items list pages through a queue's items, filtered by state, kind and
// tag, in text and JSON.
func TestItemsList(t *testing.T) {
	e := newEnv(t)
	dead := e.dead("q", `{"n":0}`, "boom")
	a := e.enqueue("q", `{"n":1}`, claim.Tags("red", "big"))
	b := e.enqueue("q", "two", claim.Delay(time.Hour), claim.Priority(3))
	c := e.enqueue("q", `{"n":3}`, claim.Tags("red"))
	e.enqueue("other", "elsewhere")
	_, err := e.broker.EnqueueArgs(ctx, "q", kindArgs{N: 4})
	require.NoError(t, err)

	out := e.ok("items", "list", "--queue", "q")
	ls := lines(out)
	require.Len(t, ls, 6, out)
	assert.Equal(t, "ID STATE KIND ATTEMPTS PRIORITY ENQUEUED TAGS", ls[0])
	assert.Regexp(t, fmt.Sprintf(`^%d dead - 1/1 0 \S+Z -$`, dead.ID), ls[1])
	assert.Regexp(t, fmt.Sprintf(`^%d visible - 0/25 0 \S+Z red,big$`, a.ID), ls[2])
	assert.Regexp(t, fmt.Sprintf(`^%d delayed - 0/25 3 \S+Z -$`, b.ID), ls[3])
	assert.Regexp(t, `^\d+ visible counter 0/25 0 \S+Z -$`, ls[5])
	requireAligned(t, out)

	ids := func(args ...string) []claim.ItemID {
		t.Helper()
		var got []claim.ItemID
		for _, it := range okJSON[[]itemJSON](e, append([]string{"items", "list", "--queue", "q"}, args...)...) {
			got = append(got, it.ID)
		}
		return got
	}
	assert.Equal(t, []claim.ItemID{dead.ID}, ids("--state", "dead"))
	assert.Equal(t, []claim.ItemID{b.ID}, ids("--state", "delayed"))
	assert.Equal(t, []claim.ItemID{a.ID, c.ID}, ids("--tag", "red"))
	assert.Len(t, ids("--kind", "counter"), 1)
	assert.Equal(t, []claim.ItemID{a.ID, b.ID}, ids("--after", id(dead), "--limit", "2"))
	assert.Equal(t, []claim.ItemID{c.ID}, ids("--after", id(b), "--limit", "1"))
	assert.Empty(t, ids("--state", "completed"))

	all := okJSON[[]itemJSON](e, "items", "list", "--queue", "q", "--limit", "2")
	require.Len(t, all, 2)
	assert.JSONEq(t, `{"n":0}`, string(all[0].Payload))
	assert.Equal(t, "dead", all[0].State)
	require.Len(t, all[0].History, 1)
	assert.Equal(t, "boom", all[0].History[0].Reason)
	assert.Equal(t, []string{"red", "big"}, all[1].Tags)

	assert.Equal(t, "[]\n", e.ok("--json", "items", "list", "--queue", "empty"))
	e.fails(exitUsage, `required flag(s) "queue" not set`, "items", "list")
	e.fails(exitUsage, `--state is one of visible, delayed, claimed, dead, completed, cancelled, not "gone"`,
		"items", "list", "--queue", "q", "--state", "gone")
	e.fails(exitUsage, "--limit must be at least 1", "items", "list", "--queue", "q", "--limit", "0")
	e.fails(exitUsage, "invalid argument", "items", "list", "--queue", "q", "--after", "-1")
}

// kindArgs is a job kind, for the --kind filter.
type kindArgs struct{ N int }

func (kindArgs) Kind() string { return "counter" }

// items show gives every field of an item, its payload and metadata, and
// its failed attempts.
func TestItemsShow(t *testing.T) {
	e := newEnv(t)
	it := e.enqueue("q", `{"to":"ada"}`, claim.Tags("mail"), claim.Metadata([]byte("\x00\x01")),
		claim.Key("k1"), claim.MaxAttempts(3), claim.Timeout(90*time.Second))
	c := e.claimOne("q")
	_, err := e.broker.Fail(ctx, c, "smtp refused", time.Hour, time.Hour)
	require.NoError(t, err)

	out := e.ok("items", "show", id(it))
	ls := lines(out)
	assert.Equal(t, []string{
		"ID: " + id(it), "Queue: q", "Kind: -", "Key: k1", "State: delayed", "Attempts: 1 of 3", "Priority: 0",
		"Timeout: 1m30s", "Tags: mail",
	}, ls[:9])
	assert.Regexp(t, `^Enqueued: \S+Z$`, ls[9])
	assert.Regexp(t, `^Visible: \S+Z$`, ls[10])
	assert.Equal(t, []string{"Dead: -", "Finished: -", `Payload: {"to":"ada"}`, "Metadata: base64:AAE=", "",
		"Failed attempts:", "ATTEMPT AT OWNER LOST REASON"}, ls[11:18])
	assert.Regexp(t, `^1 \S+Z test-owner false smtp refused$`, ls[18])

	got := okJSON[itemJSON](e, "items", "show", id(it))
	assert.Equal(t, it.ID, got.ID)
	assert.Equal(t, "delayed", got.State)
	assert.Equal(t, "1m30s", got.Timeout)
	assert.Equal(t, "k1", got.Key)
	assert.JSONEq(t, `{"to":"ada"}`, string(got.Payload))
	assert.Empty(t, got.PayloadBase64)
	assert.Nil(t, got.Metadata)
	assert.Equal(t, "AAE=", got.MetadataBase64)
	require.NotNil(t, got.VisibleAt)
	assert.True(t, got.VisibleAt.After(*got.EnqueuedAt))
	assert.Nil(t, got.DeadAt)
	assert.Equal(t, []failureJSON{{Attempt: 1, Owner: "test-owner", At: got.History[0].At, Reason: "smtp refused"}}, got.History)

	e.fails(exitNotFound, "item 999999: not found", "items", "show", "999999")
	e.fails(exitUsage, `an item's ID is a positive integer, not "x"`, "items", "show", "x")
	e.fails(exitUsage, `an item's ID is a positive integer, not "0"`, "items", "show", "0")
	e.fails(exitUsage, "takes 1 argument(s): ID; got 0", "items", "show")
	e.fails(exitUsage, "takes 1 argument(s): ID; got 2", "items", "show", "1", "2")
}

// items retry makes a dead item visible again; other items are refused.
func TestItemsRetry(t *testing.T) {
	e := newEnv(t)
	dead := e.dead("q", "p", "boom")
	live := e.enqueue("q", "p")

	out := e.ok("items", "retry", id(dead))
	assert.Equal(t, fmt.Sprintf("item %d of queue q requeued\n", dead.ID), out)
	it, err := e.lookup(dead.ID)
	require.NoError(t, err)
	assert.Equal(t, claim.Visible, it.State)
	assert.Equal(t, 0, it.Attempts)

	e.fails(exitError, fmt.Sprintf("item %d is visible: only a dead item can be retried", dead.ID), "items", "retry", id(dead))
	e.fails(exitError, "is visible", "items", "retry", id(live))
	e.fails(exitNotFound, "item 999999: not found", "items", "retry", "999999")

	again := e.dead("r", "p", "boom")
	e.fails(exitNotFound, fmt.Sprintf("item %d of queue q: not found", again.ID), "items", "retry", "--queue", "q", id(again))
	got := okJSON[map[string]any](e, "items", "retry", "--queue", "r", id(again))
	assert.Equal(t, map[string]any{"id": float64(again.ID), "queue": "r", "result": "requeued"}, got)
}

// items cancel cancels an item in any state, ending a live claim; a
// finished item is left as it is.
func TestItemsCancel(t *testing.T) {
	e := newEnv(t)
	claimed := e.enqueue("q", "p")
	c := e.claimOne("q")
	waiting := e.enqueue("q", "p", claim.Delay(time.Hour))
	done := e.enqueue("done", "p")
	require.NoError(t, e.broker.Complete(ctx, e.claimOne("done")))

	assert.Equal(t, fmt.Sprintf("item %d of queue q cancelled\n", claimed.ID), e.ok("items", "cancel", id(claimed)))
	_, err := e.broker.Heartbeat(ctx, c, time.Hour)
	require.Error(t, err, "the claim ended with the cancel")
	_, err = e.lookup(claimed.ID)
	require.ErrorIs(t, err, claim.ErrNotFound, "the command's store keeps no cancelled items")

	got := okJSON[map[string]any](e, "items", "cancel", id(waiting))
	assert.Equal(t, "cancelled", got["result"])
	assert.Equal(t, fmt.Sprintf("item %d of queue done left completed\n", done.ID), e.ok("items", "cancel", id(done)))
	e.fails(exitNotFound, fmt.Sprintf("item %d: not found", claimed.ID), "items", "cancel", id(claimed))
}

// items delete deletes a dead item for good; other items are refused.
func TestItemsDelete(t *testing.T) {
	e := newEnv(t)
	dead := e.dead("q", "p", "boom")
	live := e.enqueue("q", "p")
	e.fails(exitError, "only a dead item can be deleted", "items", "delete", id(live))
	assert.Equal(t, fmt.Sprintf("item %d of queue q deleted\n", dead.ID), e.ok("items", "delete", id(dead)))
	_, err := e.lookup(dead.ID)
	require.ErrorIs(t, err, claim.ErrNotFound)
	e.fails(exitNotFound, "not found", "items", "delete", id(dead))
	e.fails(exitNotFound, "not found", "--json", "items", "delete", id(dead))
	other := e.dead("r", "p", "boom")
	assert.Equal(t, map[string]any{"id": float64(other.ID), "queue": "r", "result": "deleted"},
		okJSON[map[string]any](e, "items", "delete", "--queue", "r", id(other)))
	assert.True(t, strings.HasPrefix(e.ok("items", "delete", "--help"), "Delete a dead item"))
}
