package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var session = func() lease.Purpose {
	p, err := lease.NewPurpose("session")
	if err != nil {
		panic(err)
	}
	return p
}()

// scrape fetches /metrics over HTTP and returns its samples: each line's
// name and labels, as written, to its value.
func scrape(t *testing.T, srv *httptest.Server) map[string]float64 {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		require.NoError(t, err, line)
		out[line[:i]] = v
	}
	return out
}

// sample finds the sample named name whose labels include every one of
// labels (written name="value"), and fails unless there is exactly one.
func sample(t *testing.T, samples map[string]float64, name string, labels ...string) float64 {
	t.Helper()
	var found []string
	for k := range samples {
		if k != name && !strings.HasPrefix(k, name+"{") {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(k, l)
		}
		if ok {
			found = append(found, k)
		}
	}
	require.Len(t, found, 1, "samples of %s with %v", name, labels)
	return samples[found[0]]
}

func TestMetricsEndToEnd(t *testing.T) {
	clk := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	app, err := NewApp(clk)
	require.NoError(t, err)
	srv := httptest.NewServer(app.Handler)
	t.Cleanup(func() {
		srv.Client().CloseIdleConnections()
		srv.Close()
		require.NoError(t, app.Close())
	})
	ctx := context.Background()

	a, err := app.Service.Grant(ctx, "alice", session, time.Minute)
	require.NoError(t, err)
	_, err = app.Service.Grant(ctx, "bob", session, 5*time.Second)
	require.NoError(t, err)
	_, err = app.Service.Use(ctx, a.ID, lease.Operation)
	require.ErrorIs(t, err, lease.ErrPurposeMismatch)
	_, err = app.Service.Renew(ctx, a.ID)
	require.NoError(t, err)
	for _, p := range []string{"x", "y"} {
		_, err = app.Broker.Enqueue(ctx, Queue, []byte(p), claim.MaxAttempts(1))
		require.NoError(t, err)
	}
	clk.Advance(3 * time.Second)
	cs, err := app.Broker.Claim(ctx, Queue, "w", 2, time.Minute)
	require.NoError(t, err)
	require.Len(t, cs, 2)
	require.NoError(t, app.Broker.Complete(ctx, cs[0]))
	_, err = app.Broker.Fail(ctx, cs[1], "bounced", time.Second, time.Second)
	require.NoError(t, err)
	ok, err := app.Manager.TryLock(ctx, "report", func(context.Context, lock.Lease) error {
		clk.Advance(11 * time.Second) // bob's lease expires; the lock renews once
		return nil
	})
	require.NoError(t, err)
	require.True(t, ok)

	s := scrape(t, srv)
	purpose := `lease_purpose="session"`
	assert.Equal(t, 2.0, sample(t, s, "lease_leases_granted_total", purpose))
	assert.Equal(t, 1.0, sample(t, s, "lease_leases_active", purpose))
	assert.Equal(t, 1.0, sample(t, s, "lease_leases_renewed_total", purpose))
	assert.Equal(t, 1.0, sample(t, s, "lease_leases_ended_total", purpose, `lease_end_reason="expired"`))
	assert.Equal(t, 1.0, sample(t, s, "lease_denials_total", `lease_code="LS_PURPOSE_MISMATCH"`))
	assert.Equal(t, 1.0, sample(t, s, "lease_expiry_lag_seconds_count"))
	assert.Equal(t, 0.0, sample(t, s, "lease_expiry_lag_seconds_sum"), "the fake clock's timers fire on time")

	queue := `lease_claim_queue="mail"`
	assert.Equal(t, 2.0, sample(t, s, "lease_claim_claimed_total", queue))
	assert.Equal(t, 1.0, sample(t, s, "lease_claim_settled_total", queue, `lease_claim_outcome="completed"`))
	assert.Equal(t, 1.0, sample(t, s, "lease_claim_settled_total", queue, `lease_claim_outcome="dead_lettered"`))
	assert.Equal(t, 2.0, sample(t, s, "lease_claim_pickup_latency_seconds_count", queue))
	assert.Equal(t, 6.0, sample(t, s, "lease_claim_pickup_latency_seconds_sum", queue))
	assert.Equal(t, 2.0, sample(t, s, "lease_claim_pickup_latency_seconds_bucket", queue, `le="5"`))

	assert.Equal(t, 1.0, sample(t, s, "lease_lock_events_total", `lease_lock_event="renewed"`))
	assert.Equal(t, 1.0, sample(t, s, "lease_lock_events_total", `lease_lock_event="released"`))
	assert.Equal(t, 0.0, sample(t, s, "lease_lock_held"))
	assert.Equal(t, 11.0, sample(t, s, "lease_lock_hold_duration_seconds_sum"))
	assert.Equal(t, 1.0, sample(t, s, "lease_lock_wait_duration_seconds_count"))
}

func TestConsoleIsServed(t *testing.T) {
	app, err := NewApp(leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	require.NoError(t, err)
	srv := httptest.NewServer(app.Handler)
	t.Cleanup(func() {
		srv.Client().CloseIdleConnections()
		srv.Close()
		require.NoError(t, app.Close())
	})
	_, err = app.Broker.Enqueue(context.Background(), Queue, []byte("x"))
	require.NoError(t, err)
	resp, err := srv.Client().Get(srv.URL + "/debug/lease/?format=json")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(body), `"visible": 1`)
	resp2, err := srv.Client().Post(srv.URL+"/metrics", "text/plain", nil)
	require.NoError(t, err)
	resp2.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp2.StatusCode)
}
