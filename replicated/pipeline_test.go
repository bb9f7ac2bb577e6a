package replicated

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// Renewals batched many to an entry, with entries pipelined, are each
// acknowledged only once a quorum holds them: the leader is killed in the
// middle of a storm of renewals, right after one is acknowledged, and every
// surviving node has every lease at least at the expiry last acknowledged
// for it.
func TestAcknowledgedRenewalsSurviveLeaderKill(t *testing.T) {
	c := newCluster(t, clusterOpts{stores: boltStores, transport: tcpTransport, raft: patientRaft})
	ctx := ctxT(t)
	old := c.leader()
	leader := c.nodes[old]
	const clients = 64
	ids := make([]lease.ID, clients)
	for i := range ids {
		l, err := leader.Grant(ctx, "storm", lease.Operation, time.Minute)
		require.NoError(t, err)
		ids[i] = l.ID
	}
	var (
		mu      sync.Mutex
		acked   = make(map[lease.ID]time.Time) // the latest expiry acknowledged for each lease
		count   int
		killNow = make(chan struct{})
		wg      sync.WaitGroup
	)
	for _, id := range ids {
		wg.Go(func() {
			for {
				l, err := leader.Renew(context.Background(), id)
				if err != nil {
					return // the leader is gone
				}
				mu.Lock()
				acked[id] = l.ExpiresAt
				count++
				if count == 2000 {
					close(killNow)
				}
				mu.Unlock()
			}
		})
	}
	<-killNow
	c.stop(old)
	wg.Wait()

	nl := c.leaderOtherThan(old)
	for i, n := range c.nodes {
		if n == nil {
			continue
		}
		c.caughtUp(i, nl)
		list, err := n.Stale().List(ctx)
		require.NoError(t, err)
		require.Len(t, list, clients, "node %d", i)
		for _, l := range list {
			want, ok := acked[l.ID]
			require.True(t, ok)
			assert.False(t, l.ExpiresAt.Before(want), "node %d: lease %d expires at %v, before the %v acknowledged", i, l.ID, l.ExpiresAt, want)
		}
	}
}

// An expiry waits for no batch of commands: with every pipeline slot held,
// as when renewals fill it, a lease still ends at its expiry, and the
// commands queued meanwhile go out once a slot frees.
func TestTickTakesNoPipelineSlot(t *testing.T) {
	c := newCluster(t, clusterOpts{raft: patientRaft})
	ctx := ctxT(t)
	n := c.nodes[c.leader()]
	ends := watchEnds(n)
	defer ends.stop()
	keep, err := n.Grant(ctx, "keep", lease.Operation, time.Minute)
	require.NoError(t, err)
	short, err := n.Grant(ctx, "short", lease.Operation, 200*time.Millisecond)
	require.NoError(t, err)

	for range pipelineDepth {
		n.slots <- struct{}{}
	}
	renewed := make(chan error, 1)
	go func() {
		_, err := n.Renew(context.Background(), keep.ID)
		renewed <- err
	}()
	got := ends.next(t)
	assert.Equal(t, short.ID, got.l.ID)
	assert.Equal(t, lease.EndExpired, got.reason)
	assert.False(t, got.at.Before(short.ExpiresAt))
	select {
	case err := <-renewed:
		t.Fatalf("a renewal committed with every slot held: %v", err)
	default:
	}
	for range pipelineDepth {
		<-n.slots
	}
	require.NoError(t, <-renewed)
}
