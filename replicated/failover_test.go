package replicated

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// Killing the leader loses no lease or key, ends none early and extends
// none: the new leader has every lease with the expiry the old one
// acknowledged, and ends each at that expiry, with its keys, on every node.
func TestLeaderFailover(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    clusterOpts
	}{
		{"inmem", clusterOpts{stores: memStores, raft: patientRaft}},
		{"bolt", clusterOpts{stores: boltStores, raft: patientRaft}},
		{"tcp+bolt", clusterOpts{stores: boltStores, transport: tcpTransport, raft: patientRaft}},
	} {
		t.Run(tt.name, func(t *testing.T) { testLeaderFailover(t, tt.o) })
	}
}

func testLeaderFailover(t *testing.T, o clusterOpts) {
	c := newCluster(t, o)
	ctx := ctxT(t)
	old := c.leader()
	ends := make([]*endings, len(c.nodes))
	for i, n := range c.nodes {
		ends[i] = watchEnds(n)
	}
	const ttl = 6 * time.Second // outlasts an election on a loaded machine (3 s did not, once)
	const count = 20
	granted := make(map[lease.ID]lease.Lease)
	for i := range count {
		key := fmt.Sprintf("key/%d", i)
		l, err := c.nodes[old].GrantWithKey(ctx, fmt.Sprintf("h%d", i), lease.Operation, ttl, key, []byte(key))
		require.NoError(t, err)
		granted[l.ID] = l
	}
	// The last acknowledged renewal decides the expiry across a failover.
	var renewedID lease.ID
	for id := range granted {
		renewedID = id
		break
	}
	r, err := c.nodes[old].Renew(ctx, renewedID)
	require.NoError(t, err)
	granted[renewedID] = r

	c.stop(old)
	ends[old].stop()
	nl := c.leaderOtherThan(old)
	list, err := c.nodes[nl].List(ctx)
	require.NoError(t, err)
	require.Len(t, list, count, "no lease lost")
	for _, l := range list {
		want := granted[l.ID]
		assert.Equal(t, want.ExpiresAt, l.ExpiresAt, "lease %d: the expiry survives the failover", l.ID)
		assert.Equal(t, want.Keys, l.Keys)
		v, id, ok, err := c.nodes[nl].Get(ctx, want.Keys[0])
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, l.ID, id)
		assert.Equal(t, []byte(want.Keys[0]), v)
	}

	for i, e := range ends {
		if i == old {
			continue
		}
		var worst time.Duration
		for range count {
			got := e.next(t)
			want, ok := granted[got.l.ID]
			require.True(t, ok)
			assert.Equal(t, lease.EndExpired, got.reason)
			assert.Equal(t, want.ExpiresAt, got.l.ExpiresAt)
			assert.Equal(t, want.Keys, got.l.Keys, "the keys go with the lease")
			assert.False(t, got.at.Before(want.ExpiresAt), "node %d ended lease %d early", i, got.l.ID)
			worst = max(worst, got.at.Sub(want.ExpiresAt))
		}
		t.Logf("node %d: worst expiry lag %v", i, worst)
		for _, l := range granted {
			_, _, ok, err := c.nodes[i].Stale().Get(ctx, l.Keys[0])
			require.NoError(t, err)
			assert.False(t, ok, "key %s outlived its lease on node %d", l.Keys[0], i)
		}
		e.stop()
	}

	// The old leader comes back and catches up.
	c.start(old)
	c.caughtUp(old, nl)
	list, err = c.nodes[old].Stale().List(ctx)
	require.NoError(t, err)
	assert.Empty(t, list)
	_, err = c.nodes[old].Stale().Info(ctx, renewedID)
	assert.ErrorIs(t, err, lease.ErrExpired)
}

// A leader cut off from the others loses its place; what the new leader
// commits meanwhile reaches it when it rejoins.
func TestPartitionAndRejoin(t *testing.T) {
	c := newCluster(t, clusterOpts{})
	ctx := ctxT(t)
	old := c.leader()
	a, err := c.nodes[old].Grant(ctx, "a", lease.Operation, time.Minute)
	require.NoError(t, err)

	c.disconnect(old)
	// Sent before the leader notices: it proposes the grant, cannot
	// commit it, and steps down. Cut off, it cannot learn whether the
	// next leader kept the entry, so the call waits to settle that until
	// its context ends, and then says the outcome is unknown.
	lostCtx, cancelLost := context.WithTimeout(ctx, 3*time.Second)
	defer cancelLost()
	_, err = c.nodes[old].Grant(lostCtx, "lost", lease.Operation, time.Minute)
	require.Error(t, err, "a cut-off leader commits nothing")
	if !errors.Is(err, ErrNotLeader) {
		require.ErrorIs(t, err, raft.ErrLeadershipLost)
	}
	nl := c.leaderOtherThan(old)

	b, err := c.nodes[nl].GrantWithKey(ctx, "b", lease.Operation, time.Minute, "kb", []byte("vb"))
	require.NoError(t, err)
	_, err = c.nodes[nl].Revoke(ctx, a.ID)
	require.NoError(t, err)

	c.reconnect(old)
	c.caughtUp(old, nl)
	_, err = c.nodes[old].Stale().Info(ctx, a.ID)
	assert.ErrorIs(t, err, lease.ErrAlreadyRevoked)
	got, err := c.nodes[old].Stale().Info(ctx, b.ID)
	require.NoError(t, err)
	assert.Equal(t, b.ExpiresAt, got.ExpiresAt)
	v, _, ok, err := c.nodes[old].Stale().Get(ctx, "kb")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, []byte("vb"), v)
	// The rejoining node may call an election of its own (its term moved
	// on while it was cut off), so the list is read from whoever leads.
	list, err := c.nodes[c.leader()].List(ctx)
	require.NoError(t, err)
	assert.Len(t, list, 1, "the write the cut-off leader took was never committed")
}
