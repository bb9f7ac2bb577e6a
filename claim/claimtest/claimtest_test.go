package claimtest_test

import (
	"testing"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimtest"
	"github.com/leasehold/lease/leasetest"
)

func newFakeStore(t *testing.T) (claim.Store, lease.Clock) {
	clock := leasetest.NewFakeClock(epoch)
	s := newMemStore(clock)
	t.Cleanup(func() { _ = s.Close() })
	return s, clock
}

func TestReferenceStore(t *testing.T) {
	claimtest.TestStore(t, func(t *testing.T, _ claim.Retention) (claim.Store, lease.Clock) { return newFakeStore(t) })
}

// On the system clock the suite takes its real-time path, as it does for
// a store whose clock is a database's: leases of a second, waited out.
func TestReferenceStoreRealClock(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out real leases")
	}
	t.Parallel()
	claimtest.TestStore(t, func(t *testing.T, _ claim.Retention) (claim.Store, lease.Clock) {
		clock := lease.SystemClock()
		s := newMemStore(clock)
		t.Cleanup(func() { _ = s.Close() })
		return s, clock
	})
}

func FuzzReferenceStore(f *testing.F) {
	claimtest.FuzzStore(f, func(t *testing.T) (claim.Store, *leasetest.FakeClock) {
		clock := leasetest.NewFakeClock(epoch)
		s := newMemStore(clock)
		t.Cleanup(func() { _ = s.Close() })
		return s, clock
	})
}
