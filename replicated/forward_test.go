package replicated

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// Writes forwarded by a follower while the leader dies either succeed (on
// the old leader, or sent again to the new one when the old one never
// took them) or fail with an error wrapping raft.ErrLeadershipLost, which
// says they may have been applied; every acknowledged grant survives.
func TestForwardLeaderKilledMidCall(t *testing.T) {
	c := newCluster(t, clusterOpts{transport: tcpTransport, stores: boltStores, raft: patientRaft})
	ctx := ctxT(t)
	old := c.leader()
	fi := (old + 1) % 3
	fol := c.nodes[fi]

	var (
		mu        sync.Mutex
		acked     []lease.Lease
		uncertain atomic.Int64
		after     atomic.Int64 // grants acknowledged after the leader closed
		killed    atomic.Bool
		wg        sync.WaitGroup
	)
	stop := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				l, err := fol.Grant(ctx, "h", lease.Operation, time.Minute)
				switch {
				case err == nil:
					mu.Lock()
					acked = append(acked, l)
					mu.Unlock()
					if killed.Load() {
						after.Add(1)
					}
				case errors.Is(err, raft.ErrLeadershipLost):
					uncertain.Add(1)
				default:
					t.Errorf("a forwarded grant failed with %v", err)
					return
				}
			}
		})
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) > 50 }, waitLimit, time.Millisecond)
	c.stop(old)
	killed.Store(true)
	nl := c.leaderOtherThan(old)
	require.Eventually(t, func() bool { return after.Load() > 20 }, waitLimit, time.Millisecond, "writes carry on through the new leader")
	close(stop)
	wg.Wait()
	t.Logf("acknowledged %d, uncertain %d, after the failover %d", len(acked), uncertain.Load(), after.Load())

	for _, l := range acked {
		_, err := c.nodes[nl].Info(ctx, l.ID)
		require.NoError(t, err, "an acknowledged grant survives the failover")
	}
}

// With NoForward a follower answers a write with *NotLeaderError naming
// the leader, as a node on a caller's transport does.
func TestNoForward(t *testing.T) {
	c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
	li := c.leader()
	fi := (li + 1) % 3
	c.stop(fi)
	c.cfgs[fi].NoForward = true
	c.start(fi)
	require.Eventually(t, func() bool { id, _ := c.nodes[fi].Leader(); return id == c.cfgs[li].ID }, waitLimit, time.Millisecond)
	_, err := c.nodes[fi].Grant(ctxT(t), "h", lease.Operation, time.Minute)
	var nl *NotLeaderError
	require.ErrorAs(t, err, &nl)
	require.Equal(t, c.cfgs[li].ID, nl.LeaderID)
	_, err = c.nodes[fi].List(ctxT(t))
	require.ErrorIs(t, err, ErrNotLeader)
	require.ErrorIs(t, c.nodes[fi].AddVoter(ctxT(t), "x", "127.0.0.1:1"), ErrNotLeader)
}

// A forwarded call whose context ends while it waits at the leader
// returns the context's error.
func TestForwardHonoursContext(t *testing.T) {
	c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
	fol := c.nodes[(c.leader()+1)%3]
	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	_, err := fol.Grant(ctx, "h", lease.Operation, time.Minute)
	require.ErrorIs(t, err, context.Canceled)
}

// A linearizable read on a leader cut off from the others fails as not the
// leader, never as an uncertain outcome: it changed nothing, and it may
// be sent to the next leader.
func TestReadOnDeposedLeaderIsNotLeader(t *testing.T) {
	c := newCluster(t, clusterOpts{})
	ctx := ctxT(t)
	li := c.leader()
	l, err := c.nodes[li].Grant(ctx, "h", lease.Operation, time.Minute)
	require.NoError(t, err)
	c.disconnect(li)
	// Reads answer until the leader learns it is cut off; the first that
	// fails is the one under test.
	require.Eventually(t, func() bool {
		_, err = c.nodes[li].Info(ctx, l.ID)
		return err != nil
	}, waitLimit, time.Millisecond)
	require.ErrorIs(t, err, ErrNotLeader)
	require.NotErrorIs(t, err, raft.ErrLeadershipLost)
}

// A follower's concurrent forwarded calls share its few connections to
// the leader, in batches: many calls at once open no more connections
// than the follower's lanes, and each gets its own answer.
func TestForwardCoalescesConcurrentCalls(t *testing.T) {
	c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
	ctx := ctxT(t)
	fol := c.nodes[(c.leader()+1)%3]
	const calls = 200
	ids := make(chan lease.ID, calls)
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			l, err := fol.Grant(ctx, "h", lease.Operation, time.Minute)
			if !assert.NoError(t, err) {
				return
			}
			ids <- l.ID
		})
	}
	wg.Wait()
	close(ids)
	seen := map[lease.ID]bool{}
	for id := range ids {
		assert.False(t, seen[id], "two calls got one lease")
		seen[id] = true
	}
	require.Len(t, seen, calls)
	assert.LessOrEqual(t, fol.fwd.dials.Load(), int64(forwardLanes), "connections opened for %d concurrent calls", calls)
}

// A write a follower forwarded, cut off by the follower closing while the
// leader holds it, may have been applied: its error says so, and matches
// lease.ErrClosed as every call on a closed node does.
func TestForwardedWriteCutByClosingNode(t *testing.T) {
	var hold atomic.Bool
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	c := newCluster(t, clusterOpts{transport: tcpTransport, stores: boltStores, raft: patientRaft,
		onServe: func(n *Node, kind byte, _ []byte) {
			if kind != reqWrite || !hold.Load() {
				return
			}
			arrived <- struct{}{}
			select {
			case <-release:
			case <-n.closing:
			}
		}})
	t.Cleanup(func() { close(release) })
	leader := c.leader()
	fi := (leader + 1) % 3
	hold.Store(true)
	errc := make(chan error, 1)
	go func() {
		_, err := c.nodes[fi].Grant(ctxT(t), "h", lease.Operation, time.Minute)
		errc <- err
	}()
	select {
	case <-arrived:
	case <-time.After(waitLimit):
		t.Fatal("the write did not reach the leader")
	}
	c.stop(fi)
	select {
	case err := <-errc:
		require.ErrorIs(t, err, lease.ErrClosed)
		require.ErrorIs(t, err, ErrOutcomeUnknown)
		var le *lease.Error
		require.ErrorAs(t, err, &le)
		assert.Equal(t, CodeOutcomeUnknown, le.Code)
		assert.Contains(t, le.Detail, "connection to the leader failed")
	case <-time.After(waitLimit):
		t.Fatal("the write did not return")
	}
}
