package replicated

import (
	"testing"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/backendtest"
)

// The lease.Backend suite, the same clauses a Service passes on a fake
// clock, on a follower of a three-node cluster on TCP with mutual TLS. The
// follower forwards every write and linearizable read to the leader, so
// the suite covers the leader's own calls too.
func TestBackendSuite(t *testing.T) {
	backendtest.TestBackend(t, func(t *testing.T) (lease.Backend, lease.Clock) {
		c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
		return c.nodes[(c.leader()+1)%len(c.nodes)], lease.SystemClock()
	})
}
