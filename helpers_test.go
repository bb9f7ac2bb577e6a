package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

var (
	ctx = context.Background()
	t0  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

// newService returns a service on a fake clock, closed when the test ends.
func newService(t *testing.T, opts ...lease.Option) (*lease.Service, *leasetest.FakeClock) {
	t.Helper()
	clk := leasetest.NewFakeClock(t0)
	s := lease.Must(lease.New(append([]lease.Option{lease.WithClock(clk)}, opts...)...))
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s, clk
}

// grant grants a lease that must succeed.
func grant(t *testing.T, s *lease.Service, p lease.Purpose, ttl time.Duration) lease.Lease {
	t.Helper()
	l, err := s.Grant(ctx, "holder", p, ttl)
	require.NoError(t, err)
	return l
}

// requireCode asserts err is a *lease.Error with code, matching sentinel.
func requireCode(t *testing.T, err error, code lease.Code, sentinel error) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, sentinel)
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, code, le.Code)
}

// auditFunc is the option that makes the service tell f every Decision.
func auditFunc(f func(lease.Decision)) lease.Option {
	return lease.WithAuditObserver(lease.ObserverFunc[lease.Decision](f))
}

// onExpired subscribes f to the leases of s that expire, not to those
// revoked.
func onExpired(s *lease.Service, f func(lease.Lease)) {
	s.OnEnd(func(l lease.Lease, reason lease.EndReason) {
		if reason == lease.EndExpired {
			f(l)
		}
	})
}

// mustGet is s.Get, which must not fail.
func mustGet(t testing.TB, s *lease.Service, key string) ([]byte, lease.ID, bool) {
	t.Helper()
	v, id, ok, err := s.Get(ctx, key)
	require.NoError(t, err)
	return v, id, ok
}

// mustScan is s.Scan, which must not fail.
func mustScan(t testing.TB, s *lease.Service, prefix string, limit int) []lease.KeyValue {
	t.Helper()
	kvs, err := s.Scan(ctx, prefix, limit)
	require.NoError(t, err)
	return kvs
}

// mustList is s.List, which must not fail.
func mustList(t testing.TB, s *lease.Service) []lease.Lease {
	t.Helper()
	l, err := s.List(ctx)
	require.NoError(t, err)
	return l
}

// mustListAfter is s.ListAfter, which must not fail.
func mustListAfter(t testing.TB, s *lease.Service, after lease.ID, limit int) []lease.Lease {
	t.Helper()
	l, err := s.ListAfter(ctx, after, limit)
	require.NoError(t, err)
	return l
}
