package replicated

import (
	"testing"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/backendtest"
)

// The lease.Backend suite on the leader of a three-node cluster on TCP,
// the same clauses a Service passes on a fake clock.
func TestBackendSuiteLeader(t *testing.T) {
	backendtest.TestBackend(t, func(t *testing.T) (lease.Backend, lease.Clock) {
		c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
		return c.nodes[c.leader()], lease.SystemClock()
	})
}

// The same suite on a follower, which forwards every write and
// linearizable read to the leader: any node serves any call.
func TestBackendSuiteFollower(t *testing.T) {
	backendtest.TestBackend(t, func(t *testing.T) (lease.Backend, lease.Clock) {
		c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
		return c.nodes[(c.leader()+1)%len(c.nodes)], lease.SystemClock()
	})
}
