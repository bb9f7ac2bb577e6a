package postgres

import (
	"testing"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election/electiontest"
)

// TestElection runs the leader-election clauses on the database's clock:
// the suite sees a system clock, so it uses its real-time variants (1 s
// leases that it waits out). The provider stores no values, so candidates'
// values travel in their execution IDs.
func TestElection(t *testing.T) {
	electiontest.TestElection(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		return newTestProvider(t), lease.SystemClock()
	})
}
