package replicated

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// resendCluster is a three-node TCP cluster whose leader holds the
// forwarded settlements it gets, while hold is set, until its node closes
// (before serving them: nothing of theirs enters the log), or, with
// commit set, until its node closes after committing them; arrived
// tells that one came.
type resendCluster struct {
	*cluster
	hold, commit atomic.Bool
	arrived      chan struct{}
}

func newResendCluster(t *testing.T) *resendCluster {
	rc := &resendCluster{arrived: make(chan struct{}, 16)}
	rc.cluster = newCluster(t, clusterOpts{transport: tcpTransport, stores: boltStores, raft: patientRaft,
		onServe: func(n *Node, kind byte, body []byte) {
			if kind != reqClaim || !rc.hold.Load() {
				return
			}
			if op, err := peekClaimOp(body); err != nil || op != callSettle {
				return
			}
			if rc.commit.Load() {
				c, err := decodeClaimCall(body)
				if err == nil {
					_ = n.submit(t.Context(), command{op: opClaim, value: encodeClaimCall(c)})
				}
			}
			rc.arrived <- struct{}{}
			<-n.closing
		}})
	return rc
}

// claimOne enqueues an item and claims it on s, with retention on, so
// that a completed item stays to be looked at.
func claimOne(t *testing.T, s *ClaimStore) claim.Claim {
	ctx := ctxT(t)
	require.NoError(t, s.SetRetention(ctx, claim.StandardRetention))
	_, err := s.Enqueue(ctx, []claim.NewItem{{Queue: "q", MaxAttempts: 3}})
	require.NoError(t, err)
	cs, err := s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	return cs[0]
}

// settleAsLeaderDies claims an item on a follower's store, settles it
// there while the leader, holding the settlement (having committed it
// first, with commit), closes, and returns the store, the claim and what
// Settle returned, once another node leads.
func settleAsLeaderDies(t *testing.T, commit bool) (*ClaimStore, claim.Claim, error) {
	rc := newResendCluster(t)
	old := rc.leader()
	s, err := NewClaimStore(rc.nodes[(old+1)%3])
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	held := claimOne(t, s)

	rc.commit.Store(commit)
	rc.hold.Store(true)
	settled := make(chan error, 1)
	go func() { settled <- s.Settle(ctxT(t), claim.Settlement{Ref: held.Ref, How: claim.SettleComplete}) }()
	select {
	case <-rc.arrived:
	case <-time.After(waitLimit):
		t.Fatal("the settlement did not reach the leader")
	}
	rc.stop(old)
	rc.hold.Store(false)
	select {
	case err = <-settled:
	case <-time.After(waitLimit):
		t.Fatal("the settlement did not return")
	}
	rc.leaderOtherThan(old)
	return s, held, err
}

// A follower's settlement that its leader took and died with, before
// committing it, is sent again to the next leader, which commits it: the
// item completes once instead of running again when its claim's lease
// ends.
func TestForwardedSettlementResentAfterLeaderDies(t *testing.T) {
	s, held, err := settleAsLeaderDies(t, false)
	require.NoError(t, err, "the settlement went to the next leader")
	it, err := s.Lookup(ctxT(t), held.Item)
	require.NoError(t, err)
	assert.Equal(t, claim.Completed, it.State)
	assert.Equal(t, 1, it.Attempts, "the item ran once")
}

// A settlement that its leader committed before dying, sent again, finds
// its claim ended: the caller learns the outcome is not known (its first
// attempt may have been applied), with the error of the second, and the
// item stays completed.
func TestForwardedSettlementResentAfterCommitIsUncertain(t *testing.T) {
	s, held, err := settleAsLeaderDies(t, true)
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	require.ErrorIs(t, err, lease.ErrStaleUse, "the second attempt's error")
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, CodeOutcomeUnknown, le.Code)
	it, err := s.Lookup(ctxT(t), held.Item)
	require.NoError(t, err)
	assert.Equal(t, claim.Completed, it.State)
}
