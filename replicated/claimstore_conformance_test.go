package replicated

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
	"github.com/leasehold/lease/claim/claimtest"
	"github.com/leasehold/lease/internal/captable"
)

// newClaimCluster starts a cluster of size nodes on TCP over loopback and
// returns a claim store on each, closed when the test ends.
func newClaimCluster(t *testing.T, size int, stores storeKind) (*cluster, []*ClaimStore) {
	t.Helper()
	c := newCluster(t, clusterOpts{size: size, stores: stores, transport: tcpTransport, insecure: true, raft: patientRaft})
	c.leader()
	out := make([]*ClaimStore, size)
	for i := range size {
		s, err := NewClaimStore(c.nodes[i])
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		out[i] = s
	}
	return c, out
}

// spread is a claim store that makes each call on the next node's store in
// turn, leader and followers alike, so that a clause's calls cross the
// forwarding path and meet the log's results on every node.
type spread struct {
	stores []*ClaimStore
	next   atomic.Uint64
}

func (s *spread) pick() *ClaimStore {
	return s.stores[int(s.next.Add(1)-1)%len(s.stores)]
}

func (s *spread) Enqueue(ctx context.Context, items []claim.NewItem) ([]claim.Item, error) {
	return s.pick().Enqueue(ctx, items)
}

func (s *spread) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	return s.pick().Claim(ctx, req)
}

func (s *spread) Extend(ctx context.Context, r claim.Ref, d time.Duration) (time.Time, error) {
	return s.pick().Extend(ctx, r, d)
}

func (s *spread) Settle(ctx context.Context, st claim.Settlement) error {
	return s.pick().Settle(ctx, st)
}

func (s *spread) Cancel(ctx context.Context, queue string, id claim.ItemID) error {
	return s.pick().Cancel(ctx, queue, id)
}

func (s *spread) Lookup(ctx context.Context, id claim.ItemID) (claim.Item, error) {
	return s.pick().Lookup(ctx, id)
}

func (s *spread) List(ctx context.Context, q claim.Query) ([]claim.Item, error) {
	return s.pick().List(ctx, q)
}

func (s *spread) Counts(ctx context.Context, queue string) (claim.Counts, error) {
	return s.pick().Counts(ctx, queue)
}

func (s *spread) RequeueDead(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	return s.pick().RequeueDead(ctx, queue, id)
}

func (s *spread) DeleteDead(ctx context.Context, queue string, id claim.ItemID) error {
	return s.pick().DeleteDead(ctx, queue, id)
}

func (s *spread) RetryNow(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	return s.pick().RetryNow(ctx, queue, id)
}

func (s *spread) Pause(ctx context.Context, queue string) error { return s.pick().Pause(ctx, queue) }

func (s *spread) Resume(ctx context.Context, queue string) error { return s.pick().Resume(ctx, queue) }

func (s *spread) Queues(ctx context.Context, q claim.QueueQuery) ([]claim.QueueInfo, error) {
	return s.pick().Queues(ctx, q)
}

func (s *spread) Clean(ctx context.Context, limit int) (int, error) {
	return s.pick().Clean(ctx, limit)
}

func (s *spread) Notify(queue string) (<-chan struct{}, func()) { return s.pick().Notify(queue) }

func (s *spread) Close() error {
	for _, st := range s.stores {
		_ = st.Close()
	}
	return nil
}

var _ claimstore.Cleaner = (*spread)(nil)

// newSpread is a fresh cluster of size nodes as one store, on the
// system clock (the log's time is the leader's).
func newSpread(t *testing.T, size int) *spread {
	_, stores := newClaimCluster(t, size, memStores)
	return &spread{stores: stores}
}

func TestClaimStoreConformance(t *testing.T) {
	for _, size := range []int{1, 3} {
		t.Run(clusterName(size), func(t *testing.T) {
			exercised := claimtest.TestStore(t, func(t *testing.T, r claim.Retention) (claim.Store, lease.Clock) {
				s := newSpread(t, size)
				require.NoError(t, s.stores[0].SetRetention(context.Background(), r))
				return s, lease.SystemClock()
			})
			captable.CheckClaimStore(t, "replicated.ClaimStore", (*ClaimStore)(nil), exercised)
		})
	}
}

func clusterName(size int) string {
	if size == 1 {
		return "single node"
	}
	return "three nodes"
}
