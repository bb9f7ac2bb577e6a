package console_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
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

// A page the console has no source for answers 404, in HTML and JSON, and
// is not in the navigation of any page; a page it has a source for
// answers 200 and shows only the sections it has sources for.
func TestPagesWithoutASourceAreLeftOut(t *testing.T) {
	svc := lease.Must(lease.New())
	broker := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	locks := lease.Must(lock.NewMemory(svc))
	el := lease.Must(election.New(locks, "scheduler"))
	defer func() {
		require.NoError(t, broker.Close())
		require.NoError(t, svc.Close())
	}()
	_, err := broker.Enqueue(ctx, "q", []byte("x"))
	require.NoError(t, err)

	paths := map[string]string{ // path: its page
		"/": "queues", "/queue?queue=q": "queues", "/item?id=1": "queues",
		"/locks": "locks", "/leases": "leases", "/audit": "audit",
	}
	nav := map[string]string{ // page: its link in the navigation
		"queues": `<a href="./">`, "locks": `<a href="locks">`, "leases": `<a href="leases">`, "audit": `<a href="audit">`,
	}
	for name, c := range map[string]struct {
		cfg   console.Config
		pages []string
	}{
		"service":   {console.Config{Service: svc}, []string{"leases", "audit"}},
		"broker":    {console.Config{Broker: broker}, []string{"queues"}},
		"locks":     {console.Config{Locks: locks}, []string{"locks"}},
		"elections": {console.Config{Elections: []*election.Election{el}}, []string{"locks"}},
		"all": {console.Config{Service: svc, Broker: broker, Locks: locks, Elections: []*election.Election{el}},
			[]string{"queues", "locks", "leases", "audit"}},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(lease.Must(console.New(c.cfg)))
			defer srv.Close()
			e := &env{srv: srv}
			for path, page := range paths {
				has := false
				for _, p := range c.pages {
					has = has || p == page
				}
				status, body := e.get(t, path)
				if !has {
					assert.Equal(t, http.StatusNotFound, status, path)
					assert.Contains(t, body, "no source of "+page+" configured", path)
					var doc map[string]string
					assert.Equal(t, http.StatusNotFound, e.getJSON(t, path, &doc), path)
					assert.Contains(t, doc["error"], "no source of "+page, path)
				} else {
					assert.Equal(t, http.StatusOK, status, path)
				}
				for _, p := range []string{"queues", "locks", "leases", "audit"} {
					inNav := false
					for _, q := range c.pages {
						inNav = inNav || p == q
					}
					assert.Equal(t, inNav, strings.Contains(body, nav[p]), "%s: the link to %s", path, p)
				}
			}
			_, body := e.get(t, "/locks")
			assert.Equal(t, c.cfg.Locks != nil, strings.Contains(body, "<h2>Locks held</h2>"), "the locks section")
			assert.Equal(t, len(c.cfg.Elections) > 0, strings.Contains(body, "<h2>Elections</h2>"), "the elections section")
		})
	}
}

// A pause or resume says what it did to the queue: paused it, created it
// paused (it had no items), or changed nothing; an item action says how
// many items it did what to.
func TestPauseSaysWhatHappened(t *testing.T) {
	e := newEnv(t, console.Config{Actions: true, Authorize: allow})
	_, err := e.broker.Enqueue(ctx, "mail", []byte("x"))
	require.NoError(t, err)
	act := func(op, queue string) console.ActionResult {
		t.Helper()
		status, body := e.post(t, url.Values{"op": {op}, "queue": {queue}}, nil)
		require.Equal(t, http.StatusOK, status, body)
		var res console.ActionResult
		require.NoError(t, json.Unmarshal([]byte(body), &res), body)
		assert.Empty(t, res.Error)
		return res
	}
	steps := []struct {
		op, queue, outcome, message string
	}{
		{console.OpPause, "mail", console.OutcomePaused, "queue mail paused: its workers take nothing until it is resumed"},
		{console.OpPause, "mail", console.OutcomeAlreadyPaused, "queue mail was already paused: nothing changed"},
		{console.OpResume, "mail", console.OutcomeResumed, "queue mail resumed: its workers take its items again"},
		{console.OpResume, "mail", console.OutcomeNotPaused, "queue mail was not paused: nothing changed"},
		{console.OpPause, "new", console.OutcomeCreatedPaused,
			"queue new had no items: a paused queue was created, and its workers take nothing until it is resumed"},
		{console.OpPause, "new", console.OutcomeAlreadyPaused, "queue new was already paused: nothing changed"},
	}
	for _, s := range steps {
		res := act(s.op, s.queue)
		assert.Equal(t, s.outcome, res.Outcome, "%s %s", s.op, s.queue)
		assert.Equal(t, s.message, res.Message, "%s %s", s.op, s.queue)
	}
	var p console.QueuesPage
	e.getJSON(t, "/", &p)
	require.Len(t, p.Queues, 2)
	assert.Equal(t, "new", p.Queues[1].Name)
	assert.True(t, p.Queues[1].Paused, "the queue created paused is listed")

	// The HTML answer says it too.
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/action",
		strings.NewReader(url.Values{"op": {console.OpResume}, "queue": {"new"}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "resume on <code>new</code>: resumed</h1>")
	assert.Contains(t, string(body), "queue new resumed: its workers take its items again")

	dead := e.deadLetter(t, "d", []byte("x"), "boom")
	other, err := e.broker.Enqueue(ctx, "d", []byte("y"), claim.Delay(time.Hour))
	require.NoError(t, err)
	status, raw := e.post(t, url.Values{"op": {console.OpRequeue}, "queue": {"d"},
		"id": {itemID(dead), itemID(other)}}, nil)
	require.Equal(t, http.StatusOK, status, raw)
	var res console.ActionResult
	require.NoError(t, json.Unmarshal([]byte(raw), &res))
	assert.Equal(t, "1 of 2 items requeued; 1 refused", res.Message)
	assert.Empty(t, res.Outcome)
}

func itemID(it claim.Item) string { return strconv.FormatUint(uint64(it.ID), 10) }

// TestNewRefusesABadConfig: a Config that cannot serve is refused with the
// field it gets wrong, instead of a console that answers nothing or refuses
// every action.
func TestNewRefusesABadConfig(t *testing.T) {
	svc := lease.Must(lease.New())
	defer svc.Close()
	allow := func(*http.Request) bool { return true }
	for field, cfg := range map[string]console.Config{
		"Service":      {},
		"Authorize":    {Service: svc, Actions: true},
		"Elections[0]": {Service: svc, Elections: []*election.Election{nil}},
		"PageSize":     {Service: svc, PageSize: -1},
		"BulkLimit":    {Service: svc, BulkLimit: console.MaxPageSize + 1, Actions: true, Authorize: allow},
		"PayloadLimit": {Service: svc, PayloadLimit: -5},
	} {
		h, err := console.New(cfg)
		assert.Nil(t, h, field)
		var le *lease.Error
		if assert.ErrorAs(t, err, &le, field) {
			assert.Equal(t, lease.CodeInvalidArgument, le.Code, field)
			assert.Equal(t, field, le.Field)
			assert.Equal(t, "console", le.Package, field)
		}
	}
}
