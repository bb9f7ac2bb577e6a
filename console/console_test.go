package console_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/console"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

// The queues page lists every queue with its counts and paused flag, in
// HTML and JSON, and the configured queues with no items too.
func TestQueuesPage(t *testing.T) {
	e := newEnv(t, console.Config{Queues: []string{"empty"}})
	e.deadLetter(t, "mail", []byte("y"), "smtp refused")
	for range 3 {
		_, err := e.broker.Enqueue(ctx, "mail", []byte("x"))
		require.NoError(t, err)
	}
	require.NoError(t, e.broker.PauseQueue(ctx, "reports"))

	var p console.QueuesPage
	require.Equal(t, http.StatusOK, e.getJSON(t, "/", &p))
	require.Len(t, p.Queues, 3)
	assert.Equal(t, "empty", p.Queues[0].Name)
	assert.Equal(t, console.QueueRow{Name: "mail", Visible: 3, Dead: 1, PausedKnown: true}, p.Queues[1])
	assert.Equal(t, "reports", p.Queues[2].Name)
	assert.True(t, p.Queues[2].Paused)
	require.Len(t, p.Activity, 60)
	last := p.Activity[59]
	assert.Equal(t, 1, last.Claimed)
	assert.Equal(t, 1, last.DeadLettered)
	assert.Equal(t, console.Abilities{}, p.Can, "read-only by default")

	status, body := e.get(t, "/")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `href="queue?queue=mail&amp;state=dead"`)
	assert.Contains(t, body, `<svg class="chart"`)
	assert.Contains(t, body, "paused")
	assert.NotContains(t, body, "<button", "read-only: no actions offered")
}

// The item list pages by cursor and filters by state, kind, tag and key;
// the item page shows payload, history and timeline.
func TestItemsListAndItemPage(t *testing.T) {
	e := newEnv(t, console.Config{PageSize: 2})
	var ids []claim.ItemID
	for i := range 5 {
		it, err := e.broker.Enqueue(ctx, "q", []byte(`{"n":`+strconv.Itoa(i)+`}`), claim.Tags("t"+strconv.Itoa(i%2)),
			claim.Key("k"+strconv.Itoa(i)))
		require.NoError(t, err)
		ids = append(ids, it.ID)
	}
	var p console.ItemsPage
	e.getJSON(t, "/queue?queue=q", &p)
	require.Len(t, p.Items, 2)
	assert.Equal(t, ids[1], p.Next)
	e.getJSON(t, "/queue?queue=q&after="+strconv.FormatUint(uint64(p.Next), 10), &p)
	assert.Equal(t, []claim.ItemID{ids[2], ids[3]}, []claim.ItemID{p.Items[0].ID, p.Items[1].ID})
	e.getJSON(t, "/queue?queue=q&tag=t1", &p)
	require.Len(t, p.Items, 2)
	assert.Equal(t, ids[1], p.Items[0].ID)
	p = console.ItemsPage{}
	e.getJSON(t, "/queue?queue=q&key=k4", &p)
	require.Len(t, p.Items, 1)
	assert.Equal(t, ids[4], p.Items[0].ID)
	assert.Zero(t, p.Next)
	e.getJSON(t, "/queue?queue=q&state=dead", &p)
	assert.Empty(t, p.Items)
	status, _ := e.get(t, "/queue?queue=q&state=bogus")
	assert.Equal(t, http.StatusBadRequest, status)

	dead := e.deadLetter(t, "d", []byte(`{"to":"a@b"}`), "mailbox full")
	var ip console.ItemPage
	require.Equal(t, http.StatusOK, e.getJSON(t, "/item?id="+strconv.FormatUint(uint64(dead.ID), 10), &ip))
	assert.Equal(t, "dead", ip.Item.State)
	assert.True(t, ip.PayloadJSON)
	assert.Equal(t, "{\n  \"to\": \"a@b\"\n}", ip.Payload)
	require.Len(t, ip.History, 1)
	assert.Equal(t, "mailbox full", ip.History[0].Reason)
	var whats []string
	for _, s := range ip.Timeline {
		whats = append(whats, s.What)
	}
	assert.Equal(t, []string{"enqueued", "failed", "dead"}, whats)
	status, _ = e.get(t, "/item?id=999")
	assert.Equal(t, http.StatusNotFound, status)
}

// hostile strings: a script, attribute breakers, markup.
var hostile = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(2)>`,
	`'onmouseover='alert(3)`,
	`</pre><script>alert(4)</script>`,
	`javascript:alert(5)`,
}

// quoted matches a quoted attribute value: html/template escapes every
// double quote in text and values, so what is left outside them is markup.
var quoted = regexp.MustCompile(`"[^"]*"`)

// handlerAttr matches a tag with an event-handler attribute.
var handlerAttr = regexp.MustCompile(`<[a-zA-Z][^>]*\son[a-z]+\s*=`)

// requireInert fails unless body has no script element, no event handler
// attribute and no javascript: link.
func requireInert(t *testing.T, where, body string) {
	t.Helper()
	assert.NotContains(t, body, "<script", where)
	assert.NotContains(t, body, "<img", where)
	assert.NotContains(t, body, `"javascript:`, where)
	assert.False(t, handlerAttr.MatchString(quoted.ReplaceAllString(body, `""`)), "%s: an event handler", where)
}

// Every caller's string is escaped: payloads, reasons, queue names, tags,
// kinds, keys, holders. A huge payload is cut to the limit.
func TestHostileStringsAreInert(t *testing.T) {
	e := newEnv(t, console.Config{Actions: true, Authorize: allow, PayloadLimit: 1 << 10})
	var paths []string
	for i, s := range hostile {
		queue := "q" + s
		it := e.deadLetter(t, queue, []byte(s), s, claim.Tags("t"+strconv.Itoa(i)+s), claim.Key(s))
		paths = append(paths, "/queue?queue="+url.QueryEscape(queue), "/item?id="+strconv.FormatUint(uint64(it.ID), 10))
		_, err := e.svc.Grant(ctx, s, lease.Operation, time.Minute)
		require.NoError(t, err)
	}
	huge, err := e.broker.Enqueue(ctx, "huge", []byte(strings.Repeat("<script>", 1<<17)))
	require.NoError(t, err)
	paths = append(paths, "/", "/leases", "/audit", "/item?id="+strconv.FormatUint(uint64(huge.ID), 10),
		"/queue?queue="+url.QueryEscape(hostile[0]), "/item?id=x"+url.QueryEscape(hostile[1]))
	for _, p := range paths {
		_, body := e.get(t, p)
		requireInert(t, p, body)
		assert.Less(t, len(body), 64<<10, "%s: the payload is cut to the limit", p)
	}
	_, body := e.get(t, "/item?id="+strconv.FormatUint(uint64(huge.ID), 10))
	assert.Contains(t, body, "&lt;script&gt;")
	assert.Contains(t, body, "cut to the first 1024")
}

// Actions are refused with 403, changing nothing, when they are off, when
// the authorizer says no or there is none, and across origins; they are
// POST only.
func TestActionsRefused(t *testing.T) {
	for name, cfg := range map[string]console.Config{
		"off":     {Authorize: allow},
		"refused": {Actions: true, Authorize: func(*http.Request) bool { return false }},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, cfg)
			it := e.deadLetter(t, "q", []byte("x"), "boom")
			for _, op := range []string{console.OpRequeue, console.OpDelete, console.OpCancel, console.OpPause} {
				status, _ := e.post(t, url.Values{"op": {op}, "queue": {"q"}, "id": {strconv.FormatUint(uint64(it.ID), 10)}}, nil)
				assert.Equal(t, http.StatusForbidden, status, op)
			}
			c, err := e.broker.Counts(ctx, "q")
			require.NoError(t, err)
			assert.Equal(t, claim.Counts{Dead: 1}, c)
			var p console.ItemsPage
			e.getJSON(t, "/queue?queue=q", &p)
			assert.False(t, p.Queue.Paused)
		})
	}
	e := newEnv(t, console.Config{Actions: true, Authorize: allow})
	it := e.deadLetter(t, "q", []byte("x"), "boom")
	form := url.Values{"op": {console.OpRequeue}, "queue": {"q"}, "id": {strconv.FormatUint(uint64(it.ID), 10)}}
	status, _ := e.post(t, form, http.Header{"Sec-Fetch-Site": {"cross-site"}})
	assert.Equal(t, http.StatusForbidden, status, "cross-origin")
	status, _ = e.post(t, form, http.Header{"Origin": {"https://evil.example"}})
	assert.Equal(t, http.StatusForbidden, status, "cross-origin")
	status, _ = e.get(t, "/action?"+form.Encode())
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	resp, err := http.Post(e.srv.URL+"/", "text/plain", nil)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	c, err := e.broker.Counts(ctx, "q")
	require.NoError(t, err)
	assert.Equal(t, claim.Counts{Dead: 1}, c)
}

// Each action goes through the Broker and reports its result; bulk actions
// take the filter's items up to the limit.
func TestActions(t *testing.T) {
	e := newEnv(t, console.Config{Actions: true, Authorize: allow, BulkLimit: 3})
	id := func(it claim.Item) []string { return []string{strconv.FormatUint(uint64(it.ID), 10)} }
	act := func(form url.Values) (int, string) { return e.post(t, form, nil) }

	dead := e.deadLetter(t, "q", []byte("x"), "boom")
	status, body := act(url.Values{"op": {console.OpRequeue}, "queue": {"q"}, "id": id(dead)})
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"state": "visible"`)

	delayed, err := e.broker.Enqueue(ctx, "q", []byte("later"), claim.Delay(time.Hour))
	require.NoError(t, err)
	status, body = act(url.Values{"op": {console.OpRetryNow}, "queue": {"q"}, "id": id(delayed)})
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"state": "visible"`)

	status, body = act(url.Values{"op": {console.OpCancel}, "queue": {"q"}, "id": id(delayed)})
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"state": "cancelled"`)

	status, body = act(url.Values{"op": {console.OpDelete}, "queue": {"q"}, "id": id(delayed)})
	assert.Equal(t, http.StatusConflict, status, "not a dead letter: refused")
	assert.Contains(t, body, "no such dead letter")

	require.NoError(t, e.broker.Cancel(ctx, "q", dead.ID))
	for range 5 {
		e.deadLetter(t, "bulk", []byte("x"), "boom")
	}
	status, body = act(url.Values{"op": {console.OpRequeue}, "queue": {"bulk"}, "selection": {"filter"}, "state": {"dead"}})
	require.Equal(t, http.StatusOK, status, body)
	c, err := e.broker.Counts(ctx, "bulk")
	require.NoError(t, err)
	assert.Equal(t, claim.Counts{Visible: 3, Dead: 2}, c, "bounded by the bulk limit")
	status, _ = act(url.Values{"op": {console.OpCancel}, "queue": {"bulk"}, "id": {"1", "2", "3", "4"}})
	assert.Equal(t, http.StatusBadRequest, status, "more ids than the bulk limit")

	status, body = act(url.Values{"op": {console.OpPause}, "queue": {"bulk"}})
	require.Equal(t, http.StatusOK, status, body)
	cs, err := e.broker.Claim(ctx, "bulk", "w", 1, time.Minute)
	require.NoError(t, err)
	assert.Empty(t, cs, "paused")
	var p console.ItemsPage
	e.getJSON(t, "/queue?queue=bulk", &p)
	assert.True(t, p.Queue.Paused)
	assert.True(t, p.Can.Pause)
	status, _ = act(url.Values{"op": {console.OpResume}, "queue": {"bulk"}})
	require.Equal(t, http.StatusOK, status)
	cs, err = e.broker.Claim(ctx, "bulk", "w", 1, time.Minute)
	require.NoError(t, err)
	assert.Len(t, cs, 1, "resumed")

	status, _ = act(url.Values{"op": {"explode"}, "queue": {"q"}, "id": {"1"}})
	assert.Equal(t, http.StatusBadRequest, status)
}

// A store without RetryNow or Pause gets neither offered nor done.
func TestActionsHiddenWhenTheStoreLacksThem(t *testing.T) {
	svc := lease.Must(lease.New())
	b := lease.Must(claim.New(struct{ claim.Store }{lease.Must(claim.NewMemory(svc))}))
	defer func() { require.NoError(t, b.Close()); require.NoError(t, svc.Close()) }()
	srv := httptest.NewServer(lease.Must(console.New(console.Config{Broker: b, Queues: []string{"q"}, Actions: true, Authorize: allow})))
	defer srv.Close()
	e := &env{srv: srv}
	var p console.QueuesPage
	e.getJSON(t, "/", &p)
	assert.Equal(t, console.Abilities{Cancel: true, Delete: true, Requeue: true}, p.Can)
	require.Len(t, p.Queues, 1)
	assert.False(t, p.Queues[0].PausedKnown)
	status, _ := e.post(t, url.Values{"op": {console.OpPause}, "queue": {"q"}}, nil)
	assert.Equal(t, http.StatusBadRequest, status)
}

// Mounted under a prefix, every link stays under it.
func TestMountedUnderAPrefix(t *testing.T) {
	e := newEnv(t, console.Config{})
	e.deadLetter(t, "q", []byte("x"), "boom")
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", lease.Must(console.New(console.Config{Broker: e.broker, Service: e.svc}))))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/ops/")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	for _, link := range []string{"/ops/queue?queue=q&state=dead", "/ops/item?id=1", "/ops/leases", "/ops/audit"} {
		resp, err := http.Get(srv.URL + link)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusOK, resp.StatusCode, link)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	mux2 := http.NewServeMux()
	mux2.Handle("/ops", http.StripPrefix("/ops", lease.Must(console.New(console.Config{Broker: e.broker}))))
	srv2 := httptest.NewServer(mux2)
	defer srv2.Close()
	resp, err = client.Get(srv2.URL + "/ops")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusFound, resp.StatusCode)
	assert.Equal(t, "ops/", resp.Header.Get("Location"))
}

// The locks page shows the locks held and each election's leader; the
// leases and audit pages page and filter.
func TestLocksLeasesAudit(t *testing.T) {
	e := newEnv(t, console.Config{})
	locks := lease.Must(lock.NewMemory(e.svc))
	l, err := locks.Acquire(ctx, "jobs/nightly", "exec-1", time.Minute)
	require.NoError(t, err)
	el, err := election.New(locks, "leader")
	require.NoError(t, err)
	h := lease.Must(console.New(console.Config{Service: e.svc, Locks: locks, Elections: []*election.Election{el}, PageSize: 1}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	v := &env{srv: srv}
	var lp console.LocksPage
	v.getJSON(t, "/locks", &lp)
	require.Len(t, lp.Locks, 1)
	assert.Equal(t, "jobs/nightly", lp.Locks[0].Name)
	assert.Equal(t, "exec-1", lp.Locks[0].ExecutionID)
	assert.Equal(t, time.Minute, lp.Locks[0].Remaining)
	require.Len(t, lp.Elections, 1)
	assert.False(t, lp.Elections[0].Leader)

	_, err = e.svc.Grant(ctx, "alice", lease.Operation, time.Minute)
	require.NoError(t, err)
	var pg console.LeasesPage
	v.getJSON(t, "/leases", &pg)
	assert.Equal(t, 2, pg.Total)
	require.Len(t, pg.Leases, 1)
	assert.NotZero(t, pg.Next)
	var ap console.AuditPage
	v.getJSON(t, "/audit?holder=alice", &ap)
	require.Len(t, ap.Decisions, 1)
	assert.Equal(t, lease.ActionGrant, ap.Decisions[0].Action)
	_ = l
}

// A queue's page finds its paused flag however many queue names sort just
// before it, and knows an empty, running queue.
func TestQueuePausedFlagAmongManyNames(t *testing.T) {
	e := newEnv(t, console.Config{})
	for i := range 40 {
		_, err := e.broker.Enqueue(ctx, "jobr-"+strconv.Itoa(i), []byte("x"))
		require.NoError(t, err)
	}
	require.NoError(t, e.broker.PauseQueue(ctx, "jobs"))
	require.NoError(t, e.broker.PauseQueue(ctx, "é"))
	for _, name := range []string{"jobs", "é"} {
		var p console.ItemsPage
		e.getJSON(t, "/queue?queue="+url.QueryEscape(name), &p)
		assert.True(t, p.Queue.Paused, name)
		assert.True(t, p.Queue.PausedKnown, name)
	}
	var p console.ItemsPage
	e.getJSON(t, "/queue?queue=nothing", &p)
	assert.Equal(t, console.QueueRow{Name: "nothing", PausedKnown: true}, p.Queue)
}
