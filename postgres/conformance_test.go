package postgres

import (
	"testing"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/captable"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/locktest"
)

// TestConformance runs the lock contract on the database's clock: the suite
// sees a system clock, so it uses its real-time variants (short leases that
// it waits out).
func TestConformance(t *testing.T) {
	exercised := locktest.TestProvider(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		return newTestProvider(t), lease.SystemClock()
	})
	captable.CheckLockProvider(t, "postgres.LockProvider", (*LockProvider)(nil), exercised)
}
