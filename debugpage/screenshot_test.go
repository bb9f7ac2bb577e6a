package debugpage_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/debugpage"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

// TestScreenshot renders the page of a small fixture in headless Chromium
// and writes the PNG named by LEASE_DEBUG_SCREENSHOT (a path relative to
// this package's directory or absolute). Without that variable it is
// skipped: it needs a Chromium binary (LEASE_CHROMIUM, default
// "chromium"), so it is a manual check, run by scripts/debug-screenshot,
// never in CI.
func TestScreenshot(t *testing.T) {
	out := os.Getenv("LEASE_DEBUG_SCREENSHOT")
	if out == "" {
		t.Skip("set LEASE_DEBUG_SCREENSHOT to the PNG to write; see scripts/debug-screenshot")
	}
	out, err := filepath.Abs(out)
	require.NoError(t, err)
	browser := os.Getenv("LEASE_CHROMIUM")
	if browser == "" {
		browser = "chromium"
	}
	page := screenshotFixture(t)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: page, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		require.NoError(t, srv.Shutdown(context.Background()))
		require.ErrorIs(t, <-served, http.ErrServerClosed)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--hide-scrollbars", "--screenshot="+out, "--window-size=1200,900", "http://"+ln.Addr().String()+"/debug/lease")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	info, err := os.Stat(out)
	require.NoError(t, err)
	require.Positive(t, info.Size())
	t.Logf("wrote %s (%d bytes)", out, info.Size())
}

// screenshotFixture is a service with a few leases, locks, queues, dead
// letters and denials, as an operator might find it.
func screenshotFixture(t *testing.T) http.Handler {
	t.Helper()
	ctx := context.Background()
	clk := leasetest.NewFakeClock(time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC))
	svc := lease.Must(lease.New(lease.WithClock(clk)))
	locks := lease.Must(lock.NewMemory(svc))
	broker := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	t.Cleanup(func() {
		require.NoError(t, broker.Close())
		require.NoError(t, svc.Close())
	})
	_, err := svc.GrantWithKey(lease.WithTraceID(ctx, "4bf92f3577b34da6a3ce929d0e0e4736"), "api-7f9c",
		lease.StateWrite, 2*time.Minute, "config/pricing", []byte("v12"))
	require.NoError(t, err)
	migration, err := svc.Grant(ctx, "migrator-2", lease.MigrationHandoff, 10*time.Minute)
	require.NoError(t, err)
	for _, h := range [][2]string{{"billing/close-day", "cron-eu-1"}, {"reports/weekly", "cron-us-2"}} {
		l, err := locks.Acquire(ctx, h[0], h[1], 30*time.Second)
		require.NoError(t, err)
		require.NotNil(t, l)
	}
	for i, q := range []string{"email", "email", "email", "webhooks", "webhooks"} {
		_, err := broker.Enqueue(ctx, q, []byte{byte(i)}, claim.MaxAttempts(1))
		require.NoError(t, err)
	}
	cs, err := broker.Claim(ctx, "webhooks", "worker-3", 1, time.Minute)
	require.NoError(t, err)
	_, err = broker.Fail(ctx, cs[0], "POST https://hooks.example.com: 503 Service Unavailable", time.Second, time.Second)
	require.NoError(t, err)
	_, err = broker.Claim(ctx, "email", "worker-1", 1, time.Minute)
	require.NoError(t, err)
	clk.Advance(12 * time.Second)
	_, err = svc.Use(ctx, migration.ID, lease.StateWrite)
	require.Error(t, err)
	_, err = svc.Renew(lease.WithTraceID(ctx, "0af7651916cd43dd8448eb211c80319c"), migration.ID)
	require.NoError(t, err)

	mux := http.NewServeMux()
	mux.Handle("/debug/lease", debugpage.New(debugpage.Config{Service: svc, Locks: locks, Broker: broker,
		Queues: []string{"email", "webhooks"}, AuditLimit: 12}))
	return mux
}
