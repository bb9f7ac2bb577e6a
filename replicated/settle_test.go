package replicated

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// outageTTL is the TTL of the leases the outage tests grant: long enough
// to outlast stopping the cluster on a loaded machine, so that the lease
// expires while no node leads.
const outageTTL = 2 * time.Second

// A whole cluster that was down past a lease's expiry comes back without
// it: the first linearizable read on the new leader sees the lease expired
// and its key gone, whether the nodes were stopped or killed.
func TestLinearizableReadAfterWholeClusterRestart(t *testing.T) {
	t.Run("stopped", func(t *testing.T) {
		c := newCluster(t, clusterOpts{stores: boltStores, transport: tcpTransport, raft: patientRaft})
		l, err := c.nodes[c.leader()].GrantWithKey(ctxT(t), "h", lease.Operation, outageTTL, "k", []byte("v"))
		require.NoError(t, err)
		for i := range c.nodes {
			c.stop(i)
		}
		held := heldLease{ID: l.ID, Key: l.Keys[0], ExpiresAt: l.ExpiresAt}
		outlast(t, held.ExpiresAt)
		for i := range c.nodes {
			c.start(i)
		}
		requireEndedOnFirstRead(t, c, held)
	})
	t.Run("killed", func(t *testing.T) {
		var dirs, binds []string
		for range 3 {
			dirs, binds = append(dirs, t.TempDir()), append(binds, freeAddr(t))
		}
		cluster := startChild(t, "cluster",
			helperDirs+"="+strings.Join(dirs, ","), helperBinds+"="+strings.Join(binds, ","), helperTTL+"="+outageTTL.String())
		var held heldLease
		require.NoError(t, json.Unmarshal([]byte(cluster.ready(t)), &held))
		cluster.kill()
		outlast(t, held.ExpiresAt)
		c := newCluster(t, clusterOpts{stores: boltStores, transport: tcpTransport, raft: patientRaft, dirs: dirs, binds: binds})
		requireEndedOnFirstRead(t, c, held)
	})
}

// A lease that expires while no node leads is expired for the first
// linearizable read on the next leader.
func TestLinearizableReadAfterLeaderlessPeriod(t *testing.T) {
	c := newCluster(t, clusterOpts{stores: boltStores, transport: tcpTransport, raft: patientRaft})
	li := c.leader()
	l, err := c.nodes[li].GrantWithKey(ctxT(t), "h", lease.Operation, outageTTL, "k", []byte("v"))
	require.NoError(t, err)
	c.stop((li + 1) % 3)
	c.stop((li + 2) % 3)
	lone := c.nodes[li]
	require.Eventually(t, func() bool { return lone.raft.State() != raft.Leader }, waitLimit, time.Millisecond,
		"the node left alone steps down")
	held := heldLease{ID: l.ID, Key: l.Keys[0], ExpiresAt: l.ExpiresAt}
	outlast(t, held.ExpiresAt)
	got, err := lone.Stale().Info(ctxT(t), l.ID)
	require.NoError(t, err, "nobody led to end the lease")
	assert.Equal(t, l.ExpiresAt, got.ExpiresAt)
	c.start((li + 1) % 3)
	requireEndedOnFirstRead(t, c, held)
}

// outlast waits until the real time is past at: the cluster has to stay
// down until a lease's expiry has passed.
func outlast(t *testing.T, at time.Time) {
	t.Helper()
	require.True(t, time.Now().Before(at), "the lease expired before the outage began")
	require.Eventually(t, func() bool { return time.Now().After(at) }, waitLimit, 5*time.Millisecond)
}

// requireEndedOnFirstRead requires the first linearizable reads on the
// cluster's leader to see held expired and its key gone. A leader that
// loses its place meanwhile (a loaded machine misses heartbeats) answers
// ErrNotLeader, and the reads go to the next.
func requireEndedOnFirstRead(t *testing.T, c *cluster, held heldLease) {
	t.Helper()
	ctx := ctxT(t)
	for {
		n := c.nodes[c.leader()]
		got, err := n.Info(ctx, held.ID)
		if errors.Is(err, ErrNotLeader) {
			continue
		}
		require.ErrorIs(t, err, lease.ErrExpired, "the lease read as live, expiring at %v", got.ExpiresAt)
		_, _, ok, err := n.Get(ctx, held.Key)
		if errors.Is(err, ErrNotLeader) {
			continue
		}
		require.NoError(t, err)
		assert.False(t, ok, "the key of the expired lease is gone")
		list, err := n.List(ctx)
		if errors.Is(err, ErrNotLeader) {
			continue
		}
		require.NoError(t, err)
		assert.Empty(t, list)
		return
	}
}

// In steady state too, a linearizable read that starts after a lease's
// expiry never shows it live, even before the leader's expiry tick has
// committed.
func TestLinearizableReadNeverShowsALeasePastItsExpiry(t *testing.T) {
	c := newCluster(t, clusterOpts{stores: boltStores, transport: tcpTransport, raft: patientRaft})
	ctx := ctxT(t)
	for range 5 {
		n := c.nodes[c.leader()]
		l, err := n.GrantWithKey(ctx, "h", lease.Operation, 100*time.Millisecond, "k", []byte("v"))
		require.NoError(t, err)
		for {
			start := time.Now()
			got, err := n.Info(ctx, l.ID)
			if errors.Is(err, ErrNotLeader) { // a loaded machine missed heartbeats
				n = c.nodes[c.leader()]
				continue
			}
			if err != nil {
				require.ErrorIs(t, err, lease.ErrExpired)
				break
			}
			require.True(t, got.ExpiresAt.After(start), "a read that began at %v saw the lease live, expiring at %v", start, got.ExpiresAt)
		}
		_, _, ok, err := n.Stale().Get(ctx, "k")
		require.NoError(t, err)
		require.False(t, ok, "the key went with its lease")
	}
}
