package election_test

import (
	"testing"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election/electiontest"
)

// BenchmarkFailoverAfterResign: how long a waiting candidate takes to lead
// once the leader resigns, on a lock.Memory.
func BenchmarkFailoverAfterResign(b *testing.B) {
	svc := lease.Must(lease.New())
	defer svc.Close()
	electiontest.BenchmarkFailover(b, lease.Must(lock.NewMemory(svc)), 30*time.Second, electiontest.Resign, 0)
}
