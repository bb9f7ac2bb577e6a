package replicated

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// A closed node's state (its FSM, with the queues and leases it holds)
// becomes garbage once its caller lets go of the node, while the rest of
// the cluster runs on: nothing of a running node, its transport or its
// connections keeps it.
func TestClosedNodeIsCollected(t *testing.T) {
	c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
	ctx := ctxT(t)
	li := c.leader()
	fi := (li + 1) % 3
	var (
		state weak.Pointer[fsm]
		mem   weak.Pointer[claim.Memory]
		svc   weak.Pointer[lease.Service]
		wnode weak.Pointer[Node]
	)
	func() {
		n := c.node(fi)
		store, err := NewClaimStore(n)
		require.NoError(t, err)
		require.NoError(t, store.SetRetention(ctx, claim.StandardRetention))
		_, err = store.Enqueue(ctx, []claim.NewItem{{Queue: "q", MaxAttempts: 1}, {Queue: "q", MaxAttempts: 1}})
		require.NoError(t, err) // forwarded to the leader
		claims, err := store.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "o", Limit: 1, Lease: time.Minute})
		require.NoError(t, err)
		require.Len(t, claims, 1)
		require.NoError(t, store.Settle(ctx, claim.Settlement{Ref: claims[0].Ref, How: claim.SettleComplete}))
		require.NoError(t, n.fsm.waitApplied(ctx, "test", c.nodes[li].raft.AppliedIndex(), nil))
		st := n.fsm.state.Load()
		mem, svc = weak.Make(st.claims.mem), weak.Make(st.claims.svc)
		_, err = n.Grant(ctx, "h", lease.Operation, time.Minute)
		require.NoError(t, err)
		require.NoError(t, store.Close())
		state = weak.Make(n.fsm)
		wnode = weak.Make(n)
	}()
	c.stop(fi)
	// What of raft's transport is still winding down holds nothing of the
	// node: its state goes with the next collection.
	runtime.GC()
	runtime.GC()
	require.Nil(t, state.Value(), "the closed node's FSM stays reachable")
	require.Nil(t, mem.Value(), "the closed node's queues stay reachable")
	require.Nil(t, svc.Value(), "the closed node's queue service stays reachable")
	require.Nil(t, wnode.Value(), "the closed node stays reachable")
}
