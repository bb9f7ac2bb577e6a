package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/console"
	"github.com/leasehold/lease/leasetest"
)

var (
	ctx = context.Background()
	t0  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

// env is a console over a Memory store on a fake clock.
type env struct {
	svc    *lease.Service
	clk    *leasetest.FakeClock
	broker *claim.Broker
	rec    *console.Recorder
	srv    *httptest.Server
}

// newEnv starts a console with cfg (its Service and Broker filled in),
// keeping completed and cancelled items for a day.
func newEnv(t testing.TB, cfg console.Config) *env {
	t.Helper()
	e := &env{clk: leasetest.NewFakeClock(t0)}
	e.svc = lease.Must(lease.New(lease.WithClock(e.clk)))
	e.rec = console.NewRecorder(e.clk)
	mem := lease.Must(claim.NewMemory(e.svc))
	require.NoError(t, mem.SetRetention(claim.StandardRetention))
	e.broker = lease.Must(claim.New(mem, claim.WithObserver(e.rec), claim.WithMaxAttempts(2)))
	cfg.Service, cfg.Broker, cfg.Recorder = e.svc, e.broker, e.rec
	e.srv = httptest.NewServer(lease.Must(console.New(cfg)))
	t.Cleanup(func() {
		e.srv.Close()
		require.NoError(t, e.broker.Close())
		require.NoError(t, e.svc.Close())
	})
	return e
}

// get fetches path and returns the status and body.
func (e *env) get(t testing.TB, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(e.srv.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// getJSON fetches path with ?format=json into v and returns the status.
func (e *env) getJSON(t testing.TB, path string, v any) int {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	status, body := e.get(t, path+sep+"format=json")
	require.NoError(t, json.Unmarshal([]byte(body), v), body)
	return status
}

// post posts form to the action endpoint, with header set on the request,
// and returns the status and body.
func (e *env) post(t testing.TB, form url.Values, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/action?format=json", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// deadLetter enqueues an item and fails it until it is dead.
func (e *env) deadLetter(t testing.TB, queue string, payload []byte, reason string, opts ...claim.EnqueueOption) claim.Item {
	t.Helper()
	it, err := e.broker.Enqueue(ctx, queue, payload, append([]claim.EnqueueOption{claim.MaxAttempts(1)}, opts...)...)
	require.NoError(t, err)
	cs, err := e.broker.Claim(ctx, queue, "worker-1", 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	out, err := e.broker.Fail(ctx, cs[0], reason, time.Second, time.Second)
	require.NoError(t, err)
	require.Equal(t, claim.DeadLettered, out)
	return it
}

// allow is an authorizer that lets every request act.
func allow(*http.Request) bool { return true }
