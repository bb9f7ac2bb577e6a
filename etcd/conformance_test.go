package etcd

import (
	"testing"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/captable"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/locktest"
)

// TestConformance runs the lock contract on a real etcd server. Leases
// expire on the server, and ExpiresAt is on the client's system clock, so
// the suite runs its real-time variants (1 s leases that it waits out).
func TestConformance(t *testing.T) {
	exercised := locktest.TestProvider(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		return newTestProvider(t), lease.SystemClock()
	})
	captable.CheckLockProvider(t, "etcd.Provider", (*Provider)(nil), exercised)
}
