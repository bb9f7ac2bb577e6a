package election_test

import (
	"testing"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election/electiontest"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newFakeMemory returns a Memory on a service on a fake clock, closed with
// the test.
func newFakeMemory(t testing.TB) (*lock.Memory, *leasetest.FakeClock) {
	t.Helper()
	svc, clock := newFakeService(t)
	return lease.Must(lock.NewMemory(svc)), clock
}

func TestMemory(t *testing.T) {
	electiontest.TestElection(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		return newFakeMemory(t)
	})
}

func TestMemoryRealClock(t *testing.T) {
	electiontest.TestElection(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		svc := lease.Must(lease.New())
		t.Cleanup(func() { _ = svc.Close() })
		return lease.Must(lock.NewMemory(svc)), svc.Clock()
	})
}

// newFakeService returns a service on a fake clock, closed with the test.
func newFakeService(t testing.TB) (*lease.Service, *leasetest.FakeClock) {
	t.Helper()
	clock := leasetest.NewFakeClock(epoch)
	svc := lease.Must(lease.New(lease.WithClock(clock)))
	t.Cleanup(func() { _ = svc.Close() })
	return svc, clock
}
