package replicated

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/backendtest"
)

// steadyRaft is raft's own LAN timeouts: the suite needs one leader for
// its whole run on a loaded machine more than it needs fast elections.
func steadyRaft(c *raft.Config) {
	c.HeartbeatTimeout = time.Second
	c.ElectionTimeout = time.Second
	c.LeaderLeaseTimeout = 500 * time.Millisecond
}

// The lease.Backend suite, the same clauses a Service passes on a fake
// clock, on a follower of a three-node cluster on TCP with mutual TLS. The
// follower forwards every write and linearizable read to the leader, so
// the suite covers the leader's own calls too. The clauses share the
// cluster.
func TestBackendSuite(t *testing.T) {
	c := newCluster(t, clusterOpts{transport: tcpTransport, raft: steadyRaft})
	fol := c.nodes[(c.leader()+1)%len(c.nodes)]
	backendtest.TestBackend(t, func(*testing.T) (lease.Backend, lease.Clock) { return fol, lease.SystemClock() })
}
