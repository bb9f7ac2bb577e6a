package claim_test

import (
	"testing"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimtest"
	"github.com/leasehold/lease/internal/captable"
	"github.com/leasehold/lease/leasetest"
)

// newConformanceMemory is a fresh memory store on a fake clock, closed with
// its service when the test ends.
func newConformanceMemory(t *testing.T) (*claim.Memory, *leasetest.FakeClock) {
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := lease.Must(lease.New(lease.WithClock(clock)))
	m := lease.Must(claim.NewMemory(svc))
	t.Cleanup(func() {
		_ = m.Close()
		_ = svc.Close()
	})
	return m, clock
}

func TestMemoryConformance(t *testing.T) {
	exercised := claimtest.TestStore(t, func(t *testing.T, r claim.Retention) (claim.Store, lease.Clock) {
		m, clock := newConformanceMemory(t)
		if err := m.SetRetention(r); err != nil {
			t.Fatal(err)
		}
		return m, clock
	})
	captable.CheckClaimStore(t, "claim.Memory", (*claim.Memory)(nil), exercised)
}

func FuzzMemoryConformance(f *testing.F) {
	claimtest.FuzzStore(f, func(t *testing.T) (claim.Store, *leasetest.FakeClock) {
		return newConformanceMemory(t)
	})
}
