package postgres

import (
	"testing"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
	"github.com/leasehold/lease/claim/claimtest"
)

// The claim store contract, on the database's clock: leases of a second,
// waited out.
func TestClaimStoreConformance(t *testing.T) {
	claimtest.TestStore(t, func(t *testing.T) (claim.Store, lease.Clock) {
		return newTestClaimStore(t), lease.SystemClock()
	})
}

// The retention contract, on the database's clock.
func TestClaimStoreCleanerConformance(t *testing.T) {
	claimtest.TestCleaner(t, func(t *testing.T, r claim.Retention) (claimstore.Cleaner, lease.Clock) {
		return newTestClaimStore(t, WithClaimRetention(r)), lease.SystemClock()
	})
}

// Pausing and listing queues, on the database's clock.
func TestClaimStoreQueuesConformance(t *testing.T) {
	claimtest.TestQueues(t, func(t *testing.T) (claimtest.QueueStore, lease.Clock) {
		return newTestClaimStore(t), lease.SystemClock()
	})
}
