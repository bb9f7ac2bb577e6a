package etcd

import (
	"testing"
	"time"

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

// BenchmarkFailoverAfterResign: how long a waiting candidate takes to lead
// once the leader resigns: the release's delete wakes its watch.
func BenchmarkFailoverAfterResign(b *testing.B) {
	p, err := New(testClient, WithPrefix("bench/"+b.Name()+"/"))
	if err != nil {
		b.Fatal(err)
	}
	electiontest.BenchmarkFailover(b, p, time.Minute, electiontest.Resign, 20*time.Millisecond)
}

// BenchmarkFailoverAfterCrash: how long a waiting candidate takes to lead
// once the leader stops renewing and releases nothing, with 1 s leases: the
// rest of the crashed leader's lease, and etcd's revocation of it.
func BenchmarkFailoverAfterCrash(b *testing.B) {
	p, err := New(testClient, WithPrefix("bench/"+b.Name()+"/"))
	if err != nil {
		b.Fatal(err)
	}
	electiontest.BenchmarkFailover(b, p, time.Second, electiontest.Crash, 20*time.Millisecond)
}
