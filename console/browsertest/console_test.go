package browsertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/console"
)

// site is a console over a Memory store, mounted under /ops/, with a
// worker completing every item of queue "mail" it claims.
type site struct {
	svc     *lease.Service
	broker  *claim.Broker
	srv     *httptest.Server
	handled atomic.Int64
	// operator is what the test's authorizer answers.
	operator atomic.Bool
}

// storeMaker makes the claim store a site runs on, over svc, keeping
// completed items for a while; it is closed with the site's Broker.
type storeMaker func(t *testing.T, svc *lease.Service) claim.Store

// memoryStore is a claim.Memory on svc.
func memoryStore(t *testing.T, svc *lease.Service) claim.Store {
	mem := lease.Must(claim.NewMemory(svc))
	require.NoError(t, mem.SetRetention(claim.StandardRetention))
	return mem
}

// stores are the stores every browser test runs on.
var stores = map[string]storeMaker{"memory": memoryStore, "postgres": postgresStore}

// forEachStore runs test on a site over each store.
func forEachStore(t *testing.T, test func(t *testing.T, s *site)) {
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) { test(t, newSite(t, mk)) })
	}
}

func newSite(t *testing.T, mk storeMaker) *site {
	t.Helper()
	s := &site{svc: lease.Must(lease.New())}
	rec := console.NewRecorder(s.svc.Clock())
	s.broker = lease.Must(claim.New(mk(t, s.svc), claim.WithObserver(rec)))
	s.operator.Store(true)
	authorize := func(*http.Request) bool { return s.operator.Load() }
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", lease.Must(console.New(console.Config{Service: s.svc, Broker: s.broker,
		Recorder: rec, Actions: true, Authorize: authorize}))))
	s.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		s.srv.Close()
		require.NoError(t, s.broker.Close())
		require.NoError(t, s.svc.Close())
	})
	return s
}

// work runs a worker on queue until the test ends, completing every item.
func (s *site) work(t *testing.T, queue string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.broker.Work(ctx, claim.Worker{Queue: queue, Owner: "worker-1", LeaseDuration: time.Minute,
			Handler: func(context.Context, claim.Claim) error {
				s.handled.Add(1)
				return nil
			}})
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// deadLetter makes a dead letter of queue with payload.
func (s *site) deadLetter(t *testing.T, queue string, payload []byte, reason string) claim.Item {
	t.Helper()
	ctx := context.Background()
	it, err := s.broker.Enqueue(ctx, queue, payload, claim.MaxAttempts(1))
	require.NoError(t, err)
	cs, err := s.broker.Claim(ctx, queue, "worker-0", 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	_, err = s.broker.Fail(ctx, cs[0], reason, time.Second, time.Second)
	require.NoError(t, err)
	return it
}

// browser is a headless Chromium tab that records every dialog, exception
// and console message of error or warning level of its pages.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		// Chromium leaves its singleton socket's directory in TMPDIR after
		// it is killed: one the test removes.
		chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1200, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			b.problems = append(b.problems, "dialog: "+ev.Message)
		case *runtime.EventExceptionThrown:
			b.problems = append(b.problems, "exception: "+ev.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == "error" || ev.Type == "warning" {
				b.problems = append(b.problems, "console: "+string(ev.Type))
			}
		}
	}))
	b.ctx = ctx
	require.NoError(t, chromedp.Do(ctx)) // starts the browser, on the long-lived context
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return b
}

// do runs steps, each bounded.
func (b *browser) do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, steps...))
}

// submit runs steps that load a page and returns its HTTP status.
func (b *browser) submit(t *testing.T, steps ...chromedp.Action[chromedp.Void]) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, steps...)
	require.NoError(t, err)
	return resp.Status
}

func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(t, err)
	return s
}

// Problems returns what went wrong in the pages so far.
func (b *browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// screenshot writes the tab as name.png into LEASE_CONSOLE_SCREENSHOTS, if
// set.
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("LEASE_CONSOLE_SCREENSHOTS")
	if dir == "" || !strings.HasSuffix(t.Name(), "/memory") {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

// An operator finds a dead letter from the queues page, retries it, and
// sees it complete.
func TestRetryADeadLetter(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *site) {
		dead := s.deadLetter(t, "mail", []byte(`{"to":"ops@example.com","subject":"report"}`), "smtp: 451 mailbox busy")
		s.deadLetter(t, "mail", []byte(`{"to":"x@example.com"}`), "smtp: 550 no such user")
		b := newBrowser(t)
		b.do(t, chromedp.Navigate(s.srv.URL+"/ops/"), chromedp.WaitVisible(chromedp.CSS("#queues")))
		b.screenshot(t, "console-queues")
		b.do(t, chromedp.Click(chromedp.CSS(`#queues td.dead a`)), chromedp.WaitVisible(chromedp.CSS("#items")))
		b.screenshot(t, "console-items")
		b.do(t, chromedp.Click(chromedp.CSS(`a[href="item?id=`+strconv.FormatUint(uint64(dead.ID), 10)+`"]`)),
			chromedp.WaitVisible(chromedp.CSS("#history")))
		assert.Equal(t, "dead", b.text(t, "#state"))
		assert.Contains(t, b.text(t, "#history"), "smtp: 451 mailbox busy")
		assert.Contains(t, b.text(t, "#payload"), `"subject": "report"`)
		b.screenshot(t, "console-item")

		s.work(t, "mail")
		b.do(t, chromedp.Click(chromedp.CSS("#requeue")), chromedp.WaitVisible(chromedp.CSS("#result")))
		assert.Contains(t, b.text(t, "#result"), "1 done")
		itemURL := s.srv.URL + "/ops/item?id=" + strconv.FormatUint(uint64(dead.ID), 10)
		require.Eventually(t, func() bool {
			b.do(t, chromedp.Navigate(itemURL), chromedp.WaitVisible(chromedp.CSS("#state")))
			return b.text(t, "#state") == "completed"
		}, 10*time.Second, 50*time.Millisecond)
		assert.Empty(t, b.Problems())
	})
}

// Pausing a queue stops its worker taking items; resuming drains it.
func TestPauseAndResume(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *site) {
		s.work(t, "mail")
		ctx := context.Background()
		b := newBrowser(t)
		b.do(t, chromedp.Navigate(s.srv.URL+"/ops/queue?queue=mail"), chromedp.Click(chromedp.CSS("#pause")),
			chromedp.WaitVisible(chromedp.CSS("#result")))
		for range 5 {
			_, err := s.broker.Enqueue(ctx, "mail", []byte("x"))
			require.NoError(t, err)
		}
		b.do(t, chromedp.Navigate(s.srv.URL+"/ops/queue?queue=mail"), chromedp.WaitVisible(chromedp.CSS("#paused")))
		b.screenshot(t, "console-paused")
		assert.Never(t, func() bool { return s.handled.Load() > 0 }, 300*time.Millisecond, 20*time.Millisecond,
			"a paused queue's worker takes nothing")
		b.do(t, chromedp.Click(chromedp.CSS("#resume")), chromedp.WaitVisible(chromedp.CSS("#result")))
		require.Eventually(t, func() bool { return s.handled.Load() == 5 }, 10*time.Second, 10*time.Millisecond)
		require.Eventually(t, func() bool {
			c, err := s.broker.Counts(ctx, "mail")
			return err == nil && c.Visible == 0 && c.Claimed == 0
		}, 10*time.Second, 10*time.Millisecond)
		assert.Empty(t, b.Problems())
	})
}

// An action without authorization is refused with 403 and changes
// nothing.
func TestActionWithoutAuthorization(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *site) {
		dead := s.deadLetter(t, "mail", []byte("x"), "boom")
		b := newBrowser(t)
		b.do(t, chromedp.Navigate(s.srv.URL+"/ops/item?id="+strconv.FormatUint(uint64(dead.ID), 10)),
			chromedp.WaitVisible(chromedp.CSS("#delete")))
		s.operator.Store(false) // the button is on the page; the right is gone
		status := b.submit(t, chromedp.Click(chromedp.CSS("#delete")))
		assert.EqualValues(t, http.StatusForbidden, status)
		assert.Contains(t, b.text(t, "#error"), "not allowed")
		c, err := s.broker.Counts(context.Background(), "mail")
		require.NoError(t, err)
		assert.Equal(t, claim.Counts{Dead: 1}, c)
	})
}

// Hostile payloads, reasons and names run no script on any page.
func TestHostilePayloadRunsNoScript(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *site) {
		hostile := []string{
			`<script>alert(1)</script>`,
			`"><img src=x onerror=alert(2)>`,
			`'><svg onload=alert(3)>`,
			`</pre><script>alert(4)</script>`,
		}
		var ids []claim.ItemID
		for _, h := range hostile {
			ids = append(ids, s.deadLetter(t, "q"+h, []byte(h), h).ID)
			_, err := s.svc.Grant(context.Background(), h, lease.Operation, time.Minute)
			require.NoError(t, err)
		}
		b := newBrowser(t)
		pages := []string{"/ops/", "/ops/leases", "/ops/audit"}
		for i, id := range ids {
			pages = append(pages, "/ops/item?id="+strconv.FormatUint(uint64(id), 10), "/ops/queue?queue=q"+urlQuery(hostile[i]))
		}
		for _, p := range pages {
			b.do(t, chromedp.Navigate(s.srv.URL+p), chromedp.WaitReady(chromedp.CSS("body")))
			scripts, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](
				`document.scripts.length + document.querySelectorAll("img,[onerror],[onload]").length`))
			require.NoError(t, err)
			assert.Zero(t, scripts, p)
		}
		b.do(t, chromedp.Navigate(s.srv.URL+"/ops/item?id="+strconv.FormatUint(uint64(ids[0]), 10)),
			chromedp.WaitVisible(chromedp.CSS("#payload")))
		assert.Equal(t, hostile[0], b.text(t, "#payload"), "shown as text")
		assert.Empty(t, b.Problems(), "no dialog, exception or console error")
	})
}

func urlQuery(s string) string { return url.QueryEscape(s) }
