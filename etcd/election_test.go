package etcd

import (
	"testing"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election/electiontest"
)

// TestElection runs the leader-election clauses on a real etcd server.
// Leases expire on the server, so the suite runs its real-time variants
// (1 s leases, etcd's shortest, that it waits out).
func TestElection(t *testing.T) {
	electiontest.TestElection(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		return newTestProvider(t), lease.SystemClock()
	})
}
