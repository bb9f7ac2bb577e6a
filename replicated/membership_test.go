package replicated

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// join opens a node that belongs to no cluster yet (no Bootstrap, an empty
// Dir), on TCP with the cluster's certificate, and returns its index.
func (c *cluster) join(id string) int {
	c.t.Helper()
	rc := testRaftConfig()
	patientRaft(rc)
	bind := freeAddr(c.t)
	cfg := Config{ID: id, Dir: c.t.TempDir(), Bind: bind, TLS: clusterCA().config(c.t, id), Raft: rc, onTerm: c.notify}
	c.mu.Lock()
	c.cfgs = append(c.cfgs, cfg)
	c.nodes = append(c.nodes, nil)
	i := len(c.nodes) - 1
	c.mu.Unlock()
	c.start(i)
	return i
}

// load grants leases through node i of c until stop is closed, and
// records every acknowledged grant.
type load struct {
	mu    sync.Mutex
	acked map[lease.ID]lease.Lease
	stop  chan struct{}
	wg    sync.WaitGroup
}

func startLoad(t *testing.T, c *cluster, via func() *Node) *load {
	ld := &load{acked: make(map[lease.ID]lease.Lease), stop: make(chan struct{})}
	ctx := ctxT(t)
	for g := range 4 {
		ld.wg.Go(func() {
			for {
				select {
				case <-ld.stop:
					return
				default:
				}
				l, err := via().Grant(ctx, fmt.Sprintf("g%d", g), lease.Operation, time.Minute)
				if err == nil {
					ld.mu.Lock()
					ld.acked[l.ID] = l
					ld.mu.Unlock()
				} else if !errors.Is(err, raft.ErrLeadershipLost) && !errors.Is(err, ErrNotLeader) {
					t.Errorf("grant under load: %v", err)
					return
				}
			}
		})
	}
	t.Cleanup(ld.halt)
	return ld
}

func (ld *load) count() int { ld.mu.Lock(); defer ld.mu.Unlock(); return len(ld.acked) }

func (ld *load) halt() {
	select {
	case <-ld.stop:
	default:
		close(ld.stop)
	}
	ld.wg.Wait()
}

// intact checks on node n that every acknowledged lease is there with the
// expiry it was acknowledged with: none lost, none extended.
func (ld *load) intact(t *testing.T, n *Node, stale bool) {
	t.Helper()
	ld.mu.Lock()
	defer ld.mu.Unlock()
	require.NotEmpty(t, ld.acked)
	ctx := ctxT(t)
	for id, l := range ld.acked {
		var got lease.Lease
		var err error
		if stale {
			got, err = n.Stale().Info(ctx, id)
		} else {
			got, err = n.Info(ctx, id)
		}
		require.NoError(t, err, "lease %d", id)
		require.True(t, l.ExpiresAt.Equal(got.ExpiresAt), "lease %d: acknowledged expiry %v, now %v", id, l.ExpiresAt, got.ExpiresAt)
	}
}

func voters(t *testing.T, n *Node) []string {
	t.Helper()
	m, err := n.Members(ctxT(t))
	require.NoError(t, err)
	var ids []string
	for _, s := range m {
		if s.Voter {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// A three-node cluster grows to five under load: the new members receive
// every lease with its acknowledged expiry and vote.
func TestGrowThreeToFiveUnderLoad(t *testing.T) {
	c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
	ctx := ctxT(t)
	li := c.leader()
	ld := startLoad(t, c, func() *Node { return c.node(li) })
	require.Eventually(t, func() bool { return ld.count() > 20 }, waitLimit, time.Millisecond)

	a := c.join("n3")
	require.NoError(t, c.nodes[li].AddNonVoter(ctx, "n3", c.cfgs[a].Bind))
	b := c.join("n4")
	require.NoError(t, c.nodes[li].AddVoter(ctx, "n4", c.cfgs[b].Bind))
	require.NoError(t, c.nodes[li].AddVoter(ctx, "n3", c.cfgs[a].Bind), "a non-voter is promoted")
	before := ld.count()
	require.Eventually(t, func() bool { return ld.count() > before+20 }, waitLimit, time.Millisecond, "writes carry on")
	ld.halt()

	require.ElementsMatch(t, []string{"n0", "n1", "n2", "n3", "n4"}, voters(t, c.nodes[li]))
	for _, i := range []int{a, b} {
		c.caughtUp(i, li)
		ld.intact(t, c.nodes[i], true)
		require.ElementsMatch(t, []string{"n0", "n1", "n2", "n3", "n4"}, voters(t, c.nodes[i]))
		st := c.nodes[i].Status()
		require.Equal(t, "follower", st.State)
		require.Equal(t, "n"+fmt.Sprint(li), st.LeaderID)
		require.True(t, st.Serving)
	}
	ld.intact(t, c.nodes[li], false)
	st := c.nodes[li].Status()
	require.Equal(t, "leader", st.State)
	require.True(t, st.Serving)
}

// A node whose disk was lost is removed and added again, empty, under its
// old ID and address: it receives the state from the leader.
func TestReplaceNodeWithLostDisk(t *testing.T) {
	c := newCluster(t, clusterOpts{transport: tcpTransport, stores: boltStores, raft: patientRaft})
	ctx := ctxT(t)
	li := c.leader()
	ld := startLoad(t, c, func() *Node { return c.node(li) })
	require.Eventually(t, func() bool { return ld.count() > 20 }, waitLimit, time.Millisecond)

	lost := (li + 1) % 3
	c.stop(lost)
	require.NoError(t, c.nodes[li].RemoveServer(ctx, c.cfgs[lost].ID))
	require.Len(t, voters(t, c.nodes[li]), 2)
	c.cfgs[lost].Dir = t.TempDir() // the disk is gone
	c.cfgs[lost].Bootstrap = nil
	c.start(lost)
	require.NoError(t, c.nodes[li].AddVoter(ctx, c.cfgs[lost].ID, c.cfgs[lost].Bind))
	ld.halt()
	c.caughtUp(lost, li)
	ld.intact(t, c.nodes[lost], true)
	require.Len(t, voters(t, c.nodes[li]), 3)
}

// Removing the leader (through a follower, which forwards the change)
// makes it step down; the others elect a leader that has every lease with
// its acknowledged expiry. Leadership can also be handed to a chosen
// member.
func TestRemoveLeaderAndTransfer(t *testing.T) {
	c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
	ctx := ctxT(t)
	old := c.leader()
	fi := (old + 1) % 3
	ld := startLoad(t, c, func() *Node { return c.node(fi) }) // through a follower
	require.Eventually(t, func() bool { return ld.count() > 20 }, waitLimit, time.Millisecond)

	// Through the follower, which forwards it to the leader. A leader
	// deposed while committing it (a loaded machine) leaves the outcome
	// unknown; removing is idempotent, so it is asked again.
	if err := c.nodes[fi].RemoveServer(ctx, c.cfgs[old].ID); err != nil {
		require.ErrorIs(t, err, raft.ErrLeadershipLost)
		require.NoError(t, c.nodes[fi].RemoveServer(ctx, c.cfgs[old].ID))
	}
	nl := c.leaderOtherThan(old)
	before := ld.count()
	require.Eventually(t, func() bool { return ld.count() > before+20 }, waitLimit, time.Millisecond, "writes carry on")
	ld.halt()
	ld.intact(t, c.nodes[nl], false)
	require.NotContains(t, voters(t, c.nodes[nl]), c.cfgs[old].ID)

	cur := c.leader()
	other := 3 - old - cur
	require.NoError(t, c.nodes[cur].TransferLeadership(ctx, c.cfgs[other].ID))
	require.Equal(t, other, c.leaderOtherThan(cur))
	ld.intact(t, c.nodes[other], false)
}

// A leader removed while it commits its own writes answers every one of
// them and closes: its raft keeps running, outside the configuration,
// until Close.
func TestRemovedLeaderCloses(t *testing.T) {
	c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
	ctx := ctxT(t)
	old := c.leader()
	ld := startLoad(t, c, func() *Node { return c.node(old) })
	require.Eventually(t, func() bool { return ld.count() > 20 }, waitLimit, time.Millisecond)
	if err := c.nodes[old].RemoveServer(ctx, c.cfgs[old].ID); err != nil {
		// Deposed while committing its own removal (a loaded machine):
		// the outcome is unknown, and removing is idempotent, so the
		// next leader is asked again.
		require.ErrorIs(t, err, raft.ErrLeadershipLost)
		require.NoError(t, c.nodes[c.leaderOtherThan(old)].RemoveServer(ctx, c.cfgs[old].ID))
	}
	nl := c.leaderOtherThan(old)
	ld.halt()
	closed := make(chan error, 1)
	n := c.node(old)
	go func() { closed <- n.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(waitLimit):
		t.Fatal("the removed leader did not close")
	}
	ld.intact(t, c.nodes[nl], false)
}
