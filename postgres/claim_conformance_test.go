package postgres

import (
	"testing"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimtest"
	"github.com/leasehold/lease/internal/captable"
)

// The claim store contract, with its capabilities, on the database's
// clock: leases of a second, waited out.
func TestClaimStoreConformance(t *testing.T) {
	exercised := claimtest.TestStore(t, func(t *testing.T, r claim.Retention) (claim.Store, lease.Clock) {
		return newTestClaimStore(t, WithClaimRetention(r)), lease.SystemClock()
	})
	captable.CheckClaimStore(t, "postgres.ClaimStore", (*ClaimStore)(nil), exercised)
}
