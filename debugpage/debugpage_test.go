package debugpage_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/debugpage"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fixture is a page over a service with a lease, a lock and a queue with a
// dead letter, served by a test server.
func fixture(t *testing.T) (*httptest.Server, *lease.Service) {
	t.Helper()
	ctx := context.Background()
	clk := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(clk)))
	locks := lease.Must(lock.NewMemory(svc))
	broker := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	t.Cleanup(func() {
		require.NoError(t, broker.Close())
		require.NoError(t, svc.Close())
	})

	_, err := svc.GrantWithKey(ctx, "<b>alice</b>", lease.StateWrite, time.Minute, "config/main", []byte("v1"))
	require.NoError(t, err)
	held, err := locks.Acquire(ctx, "reports", "worker-7", 30*time.Second)
	require.NoError(t, err)
	require.NotNil(t, held)
	for _, p := range []string{"a", "b"} {
		_, err = broker.Enqueue(ctx, "mail", []byte(p), claim.MaxAttempts(1))
		require.NoError(t, err)
	}
	cs, err := broker.Claim(ctx, "mail", "w", 1, time.Minute)
	require.NoError(t, err)
	_, err = broker.Fail(ctx, cs[0], "smtp said no", time.Second, time.Second)
	require.NoError(t, err)
	_, err = svc.Use(ctx, 999, lease.Operation)
	require.Error(t, err)
	clk.Advance(10 * time.Second)

	srv := httptest.NewServer(debugpage.New(debugpage.Config{Service: svc, Locks: locks, Broker: broker,
		Queues: []string{"mail", "empty"}, AuditLimit: 3}))
	t.Cleanup(func() {
		srv.Client().CloseIdleConnections()
		srv.Close()
	})
	return srv, svc
}

func get(t *testing.T, srv *httptest.Server, method, path, accept string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	require.NoError(t, err)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

func TestJSON(t *testing.T) {
	srv, svc := fixture(t)
	for _, c := range []struct{ path, accept string }{{"/?format=json", ""}, {"/", "application/json"}} {
		resp, body := get(t, srv, http.MethodGet, c.path, c.accept)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		var p debugpage.Page
		require.NoError(t, json.Unmarshal([]byte(body), &p))

		assert.Equal(t, t0.Add(10*time.Second), p.Now.UTC())
		assert.Equal(t, svc.Revision(), p.Revision)
		assert.Equal(t, svc.ActiveCount(), p.LeasesTotal)
		require.Len(t, p.Leases, 2) // alice's and the lock's: the claim ended with Fail
		alice := p.Leases[0]
		assert.Equal(t, "<b>alice</b>", alice.Holder)
		assert.Equal(t, "state_write", alice.Purpose)
		assert.Equal(t, []string{"config/main"}, alice.Keys)
		assert.Equal(t, 50*time.Second, alice.Remaining)

		require.Len(t, p.Locks, 1)
		assert.Equal(t, "reports", p.Locks[0].Name)
		assert.Equal(t, "worker-7", p.Locks[0].ExecutionID)
		assert.Equal(t, t0.Add(30*time.Second), p.Locks[0].ExpiresAt.UTC())

		require.Len(t, p.Queues, 2)
		mail := p.Queues[0]
		assert.Equal(t, [4]int{1, 0, 0, 1}, [4]int{mail.Visible, mail.Delayed, mail.Claimed, mail.Dead})
		require.Len(t, mail.DeadLetters, 1)
		assert.Equal(t, "smtp said no", mail.DeadLetters[0].LastFailure)
		assert.Equal(t, 1, mail.DeadLetters[0].Attempts)
		assert.Zero(t, p.Queues[1].Visible+p.Queues[1].Dead)

		require.Len(t, p.Audit, 3)
		assert.Equal(t, lease.ActionUse, p.Audit[0].Action, "newest first")
		assert.False(t, p.Audit[0].Allowed)
		assert.Equal(t, lease.CodeNotFound, p.Audit[0].Code)
		assert.Equal(t, []string{"leases", "audit", "locks", "queues"}, p.Sections)
	}
}

func TestHTML(t *testing.T) {
	srv, _ := fixture(t)
	resp, body := get(t, srv, http.MethodGet, "/", "text/html")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	for _, want := range []string{
		"As of 2026-01-01 00:00:10.000",
		"&lt;b&gt;alice&lt;/b&gt;", // escaped, never markup
		"<code>config/main</code>",
		"<td><code>reports</code></td><td>worker-7</td>",
		"#1 after 1 attempts, 2026-01-01 00:00:00.000: smtp said no",
		`<td class="denied">LS_NOT_FOUND</td>`,
	} {
		assert.Contains(t, body, want)
	}
	assert.NotContains(t, body, "<b>alice</b>")
}

func TestReadOnly(t *testing.T) {
	srv, _ := fixture(t)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		resp, _ := get(t, srv, m, "/", "")
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m)
		assert.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
	}
	resp, body := get(t, srv, http.MethodHead, "/?format=json", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Empty(t, body)
}

func TestSectionsWithoutSources(t *testing.T) {
	p := debugpage.New(debugpage.Config{}).Build(context.Background())
	assert.Empty(t, p.Sections)
	assert.False(t, p.Now.IsZero())
	rec := httptest.NewRecorder()
	debugpage.New(debugpage.Config{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?format=html", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.False(t, strings.Contains(rec.Body.String(), "<h2>"), "no sections, no headings")
}
