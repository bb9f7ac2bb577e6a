package replicated

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// In a synctest bubble time is virtual: a ten-minute lease ends at its
// expiry on every node, across a failover, and the test takes no real ten
// minutes.
func TestTenMinuteLeaseInVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterOpts{raft: func(rc *raft.Config) {
			// Virtual time is free: raft's LAN timeouts mean fewer
			// heartbeats to simulate.
			def := raft.DefaultConfig()
			rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = def.HeartbeatTimeout, def.ElectionTimeout, def.LeaderLeaseTimeout
		}})
		ctx := t.Context()
		old := c.leader()
		ends := make([]*endings, len(c.nodes))
		for i, n := range c.nodes {
			ends[i] = watchEnds(n)
		}
		l, err := c.nodes[old].GrantWithKey(ctx, "a", lease.Operation, 10*time.Minute, "k", nil)
		require.NoError(t, err)
		c.stop(old)
		ends[old].stop()
		nl := c.leaderOtherThan(old)
		got, err := c.nodes[nl].Info(ctx, l.ID)
		require.NoError(t, err)
		assert.Equal(t, l.ExpiresAt, got.ExpiresAt)
		for i, e := range ends {
			if i == old {
				continue
			}
			var end ending
			select {
			case end = <-e.ch:
			case <-time.After(time.Hour): // virtual
				t.Fatal("the lease did not end")
			}
			assert.Equal(t, l.ID, end.l.ID)
			assert.False(t, end.at.Before(l.ExpiresAt))
			assert.Less(t, end.at.Sub(l.ExpiresAt), time.Second)
			e.stop()
		}
		c.close()
	})
}
