package replicated

import (
	"testing"
	"time"

	"github.com/leasehold/lease/lock/election/electiontest"
)

// benchSpread returns a provider whose calls go to every node of a fresh
// three-node TCP cluster with mutual TLS in turn: a leader elected through
// one node, its waiter on the next.
func benchSpread(b *testing.B) *spreadLocks {
	c := newCluster(b, clusterOpts{transport: tcpTransport, raft: patientRaft})
	c.leader()
	s := &spreadLocks{}
	for _, n := range c.nodes {
		if err := n.Ready(ctxT(b)); err != nil {
			b.Fatal(err)
		}
		p, err := NewLockProvider(n, WithLockRecheck(time.Hour))
		if err != nil {
			b.Fatal(err)
		}
		s.ps = append(s.ps, p)
	}
	return s
}

// BenchmarkLockFailoverAfterResign: how long a candidate waiting through
// one node takes to lead once the leader, through another, resigns: the
// release's commit and the waiter's node applying its ending.
func BenchmarkLockFailoverAfterResign(b *testing.B) {
	electiontest.BenchmarkFailover(b, benchSpread(b), time.Minute, electiontest.Resign, 20*time.Millisecond)
}

// BenchmarkLockFailoverAfterCrash: the same once the leader stops renewing
// and releases nothing, with 1 s leases: the rest of the lease, and the
// leader's tick that ends it.
func BenchmarkLockFailoverAfterCrash(b *testing.B) {
	electiontest.BenchmarkFailover(b, benchSpread(b), time.Second, electiontest.Crash, 20*time.Millisecond)
}
