package lock_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

// newManager is NewManager for a configuration the test knows is valid.
func newManager(t testing.TB, p lock.Provider, opts ...lock.Option) *lock.Manager {
	t.Helper()
	m, err := lock.NewManager(p, opts...)
	require.NoError(t, err)
	return m
}

// scripted wraps a Provider and lets a test replace Acquire or Renew, and
// counts the calls.
type scripted struct {
	lock.Provider
	mu      sync.Mutex
	acquire func(ctx context.Context, name, exec string, d time.Duration) (*lock.Lease, error)
	renew   func(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error)
	renews  int
}

func (s *scripted) Acquire(ctx context.Context, name, exec string, d time.Duration) (*lock.Lease, error) {
	if s.acquire != nil {
		return s.acquire(ctx, name, exec, d)
	}
	return s.Provider.Acquire(ctx, name, exec, d)
}

func (s *scripted) Renew(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
	s.mu.Lock()
	s.renews++
	f := s.renew
	s.mu.Unlock()
	if f != nil {
		return f(ctx, leases, d)
	}
	return s.Provider.Renew(ctx, leases, d)
}

func (s *scripted) renewCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.renews
}

func (s *scripted) setRenew(f func(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.renew = f
}

// countingClock is the fake clock with a count of the timers armed through
// it that have neither run nor been stopped, to show the Manager leaves none
// behind (the service's own timers go to the underlying clock).
type countingClock struct {
	*leasetest.FakeClock
	live atomic.Int64
}

func (c *countingClock) AfterFunc(d time.Duration, f func()) lease.Timer {
	c.live.Add(1)
	return &countedTimer{c: c, t: c.FakeClock.AfterFunc(d, func() { c.live.Add(-1); f() })}
}

type countedTimer struct {
	c *countingClock
	t lease.Timer
}

func (t *countedTimer) Stop() bool {
	stopped := t.t.Stop()
	if stopped {
		t.c.live.Add(-1)
	}
	return stopped
}

// fixture is a memory provider on a fake clock, wrapped for scripting, and
// a Manager over it with a 30 s lease.
type fixture struct {
	clock *leasetest.FakeClock
	mc    *countingClock // the Manager's view of clock
	mem   *lock.Memory
	p     *scripted
	m     *lock.Manager
}

const testLease = 30 * time.Second

func newFixture(t *testing.T, opts ...lock.Option) *fixture {
	t.Helper()
	svc, clock := newFakeService(t)
	mem := lease.Must(lock.NewMemory(svc))
	p := &scripted{Provider: mem}
	mc := &countingClock{FakeClock: clock}
	opts = append([]lock.Option{lease.WithClock(mc), lock.WithLeaseDuration(testLease), lock.WithExecutionID("me")}, opts...)
	return &fixture{clock: clock, mc: mc, mem: mem, p: p, m: newManager(t, p, opts...)}
}

// held reports whether name is held, by trying to acquire it as someone
// else and releasing at once if that worked.
func (f *fixture) held(t *testing.T, name string) bool {
	t.Helper()
	l, err := f.mem.Acquire(context.Background(), name, "prober", time.Second)
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	if l == nil {
		return true
	}
	if err := f.mem.Release(context.Background(), []lock.Lease{*l}); err != nil {
		t.Fatalf("probe release: %v", err)
	}
	return false
}

func errFailing(context.Context, []lock.Lease, time.Duration) ([]lock.Lease, error) {
	return nil, errProvider
}

type providerError struct{}

func (providerError) Error() string { return "provider down" }

var errProvider error = providerError{}
