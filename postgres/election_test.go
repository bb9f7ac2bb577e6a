package postgres

import (
	"testing"
	"time"

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

// BenchmarkFailoverAfterResign: how long a waiting candidate takes to lead
// once the leader resigns: the release's NOTIFY wakes it.
func BenchmarkFailoverAfterResign(b *testing.B) {
	electiontest.BenchmarkFailover(b, newTestProvider(b), time.Minute, electiontest.Resign, 20*time.Millisecond)
}

// BenchmarkFailoverAfterCrash: how long a waiting candidate takes to lead
// once the leader stops renewing and releases nothing, with 1 s leases: the
// rest of the crashed leader's lease, and the waiter's wake-up at its end.
func BenchmarkFailoverAfterCrash(b *testing.B) {
	electiontest.BenchmarkFailover(b, newTestProvider(b), time.Second, electiontest.Crash, 20*time.Millisecond)
}
