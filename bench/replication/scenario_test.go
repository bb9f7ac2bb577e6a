package replication

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSystem is a system whose every call takes latency and whose leases
// are seen to end lag after their deadlines, on the bubble's fake clock,
// so that every figure a scenario computes is known in advance.
type fakeSystem struct {
	latency, lag time.Duration
	exact        bool

	mu       sync.Mutex
	next     int64
	leases   map[int64]*fakeLease
	watchers map[int]func(int64, time.Time)
	nextW    int
}

type fakeLease struct {
	ttl   time.Duration
	timer *time.Timer
}

func newFake(latency, lag time.Duration, exact bool) *fakeSystem {
	return &fakeSystem{latency: latency, lag: lag, exact: exact, leases: map[int64]*fakeLease{}, watchers: map[int]func(int64, time.Time){}}
}

// call waits for the latency, or until ctx ends.
func (f *fakeSystem) call(ctx context.Context) error {
	select {
	case <-time.After(f.latency):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeSystem) grant(ctx context.Context, ttl time.Duration) (grant, error) {
	if err := f.call(ctx); err != nil {
		return grant{}, err
	}
	if !f.exact {
		ttl = time.Duration(seconds(ttl)) * time.Second
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	id := f.next
	f.leases[id] = &fakeLease{ttl: ttl, timer: time.AfterFunc(ttl+f.lag, func() { f.end(id) })}
	return grant{id: id, deadline: time.Now().Add(ttl)}, nil
}

func (f *fakeSystem) grantKey(ctx context.Context, ttl time.Duration, _ string, _ []byte) (grant, error) {
	return f.grant(ctx, ttl)
}

func (f *fakeSystem) put(ctx context.Context, _ string, _ []byte, id int64) error {
	if err := f.call(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.leases[id]; !ok {
		return errors.New("no such lease")
	}
	return nil
}

func (f *fakeSystem) revoke(ctx context.Context, id int64) error {
	if err := f.call(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.leases[id]
	if !ok {
		return errors.New("no such lease")
	}
	l.timer.Stop()
	delete(f.leases, id)
	return nil
}

func (f *fakeSystem) exactTTL() bool { return f.exact }

func (f *fakeSystem) renewers() []renewer {
	open := func(_ context.Context, id int64) (func(context.Context) (time.Time, error), func(), error) {
		renew := func(ctx context.Context) (time.Time, error) {
			if err := f.call(ctx); err != nil {
				return time.Time{}, err
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			l, ok := f.leases[id]
			if !ok {
				return time.Time{}, errors.New("no such lease")
			}
			l.timer.Reset(l.ttl + f.lag)
			return time.Now().Add(l.ttl), nil
		}
		return renew, func() {}, nil
	}
	return []renewer{{name: "fake", open: open}}
}

func (f *fakeSystem) watchEnds(_ context.Context, _ string, fn func(int64, time.Time)) (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.nextW
	f.nextW++
	f.watchers[w] = fn
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.watchers, w)
	}, nil
}

// end ends lease id and tells the watchers, outside the lock.
func (f *fakeSystem) end(id int64) {
	f.mu.Lock()
	delete(f.leases, id)
	var fns []func(int64, time.Time)
	for _, fn := range f.watchers {
		fns = append(fns, fn)
	}
	f.mu.Unlock()
	for _, fn := range fns {
		fn(id, time.Now())
	}
}

func (f *fakeSystem) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range f.leases {
		l.timer.Stop()
	}
	return nil
}

// fakeConfig runs 4 clients for 1 s of fake time.
func fakeConfig() Config {
	return Config{Runs: 1, Duration: time.Second, Clients: 4, ExpiryLeases: 50, DueLeases: 40, DueTTL: 3 * time.Second}
}

// measured runs sc on f in a bubble and returns its figures by metric.
func measured(t *testing.T, f *fakeSystem, sc func(context.Context, system, Config) ([]measure, error)) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	synctest.Test(t, func(t *testing.T) {
		ms, err := sc(t.Context(), f, fakeConfig())
		require.NoError(t, err)
		require.NoError(t, f.close())
		for _, m := range ms {
			out[m.scenario+" "+m.metric] = m.value
		}
	})
	return out
}

// Each client completes one call a millisecond, so 4 clients for 1 s make
// 4,000 calls: 2,000 grant+revoke pairs, 4,000 grants with keys or renewals.
func TestThroughputScenarios(t *testing.T) {
	f := newFake(time.Millisecond, 0, true)
	assert.InDelta(t, 2000, measured(t, f, grantRevoke)["grant+revoke pairs/s"], 1)
	assert.InDelta(t, 2000, measured(t, f, grantPut)["grant then put (two calls) pairs/s"], 1)
	assert.InDelta(t, 4000, measured(t, f, grantWithKey)["grant with key (ours: GrantWithKey; etcd: Grant, Put) grants/s"], 1)
	assert.InDelta(t, 4000, measured(t, f, renewRate)["renew (fake) renewals/s"], 1)
}

// Leases seen to end 7 ms after their deadlines have a lag of 7 ms at every
// percentile.
func TestExpiryLagScenario(t *testing.T) {
	got := measured(t, newFake(time.Millisecond, 7*time.Millisecond, true), expiryLag)
	assert.Equal(t, 7.0, got["expiry lag p50 ms"])
	assert.Equal(t, 7.0, got["expiry lag p99 ms"])
	got = measured(t, newFake(time.Millisecond, 7*time.Millisecond, false), expiryLag)
	assert.Equal(t, 7.0, got["expiry lag p99 ms"], "whole-second TTLs")
}

// With exact TTLs every lease is due at one instant; with whole seconds the
// renewals align them, 4 clients renewing 40 leases in 10 rounds of 1 ms.
func TestDueTogetherScenario(t *testing.T) {
	got := measured(t, newFake(time.Millisecond, 7*time.Millisecond, true), dueTogether)
	assert.Equal(t, 7.0, got["due together drain ms"])
	assert.Equal(t, 0.0, got["due together deadline spread ms"])
	got = measured(t, newFake(time.Millisecond, 7*time.Millisecond, false), dueTogether)
	assert.Equal(t, 7.0, got["due together drain ms"])
	assert.Equal(t, 9.0, got["due together deadline spread ms"])
}

// A failing call stops a throughput run and is reported.
func TestThroughputStopsAtTheFirstError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(time.Millisecond, 0, true)
		_, err := grantRevoke(t.Context(), failingRevoke{f}, fakeConfig())
		require.ErrorContains(t, err, "revoke: refused")
		require.NoError(t, f.close())
	})
}

type failingRevoke struct{ *fakeSystem }

func (failingRevoke) revoke(context.Context, int64) error { return errors.New("refused") }

// The Markdown report sets each figure both targets measured side by side,
// with ours over etcd's, and leaves out what only one measured.
func TestMarkdownSideBySide(t *testing.T) {
	rep := &Report{Results: []Result{
		{Target: "etcd", Scenario: "grant+revoke", Metric: "pairs/s", Median: 1000},
		{Target: "ours", Scenario: "grant+revoke", Metric: "pairs/s", Median: 12500},
		{Target: "etcd", Scenario: "renew (KeepAliveOnce)", Metric: "renewals/s", Median: 20000},
		{Target: "etcd", Scenario: "renew (kept stream)", Metric: "renewals/s", Median: 90000},
		{Target: "ours", Scenario: "renew (Renew)", Metric: "renewals/s", Median: 40000},
	}}
	var md strings.Builder
	require.NoError(t, rep.WriteMarkdown(&md, "cmd"))
	_, side, ok := strings.Cut(md.String(), "Side by side")
	require.True(t, ok)
	assert.Contains(t, side, "| grant+revoke | pairs/s | 1,000 | 12,500 | 12.50x |")
	assert.Contains(t, side, "| renew (KeepAliveOnce) | renewals/s | 20,000 | 40,000 | 2.00x |")
	assert.NotContains(t, side, "renew (kept stream)")
}
