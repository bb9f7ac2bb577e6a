package lock_test

import (
	"testing"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/captable"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/locktest"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newFakeService returns a service on a fake clock, closed with the test.
func newFakeService(t *testing.T, opts ...lease.Option) (*lease.Service, *leasetest.FakeClock) {
	t.Helper()
	clock := leasetest.NewFakeClock(epoch)
	svc := lease.Must(lease.New(append([]lease.Option{lease.WithClock(clock)}, opts...)...))
	t.Cleanup(func() { _ = svc.Close() })
	return svc, clock
}

func TestMemoryConformance(t *testing.T) {
	exercised := locktest.TestProvider(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		svc, clock := newFakeService(t)
		return lease.Must(lock.NewMemory(svc)), clock
	})
	captable.CheckLockProvider(t, "lock.Memory", (*lock.Memory)(nil), exercised)
}

func TestMemoryConformanceRealClock(t *testing.T) {
	locktest.TestProvider(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		svc := lease.Must(lease.New())
		t.Cleanup(func() { _ = svc.Close() })
		return lease.Must(lock.NewMemory(svc)), svc.Clock()
	})
}
