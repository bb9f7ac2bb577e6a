package replicated

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// burnItems is the queue each run of BenchmarkClaimStoreBurnDown burns
// down.
const burnItems = 10_000

// BenchmarkClaimStoreBurnDown: workers claim one item at a time and
// complete it until the queue is empty; items/s is the queue's burn-down
// rate. "memory" is a claim.Memory in the process; "leader" a ClaimStore
// on the leader of 3 nodes on TCP over loopback with bolt stores (fsync
// on); "spread" the same with the workers spread over the three nodes, so
// that two thirds of the calls are forwarded.
func BenchmarkClaimStoreBurnDown(b *testing.B) {
	for _, workers := range []int{8, 64} {
		b.Run(fmt.Sprintf("memory/workers=%d", workers), func(b *testing.B) {
			svc := lease.Must(lease.New())
			defer func() { _ = svc.Close() }()
			m := lease.Must(claim.NewMemory(svc))
			defer func() { _ = m.Close() }()
			burn(b, []claim.Store{m}, workers, nil)
		})
		for _, where := range []string{"leader", "spread"} {
			b.Run(fmt.Sprintf("%s/workers=%d", where, workers), func(b *testing.B) {
				c := newCluster(b, clusterOpts{stores: boltStores, transport: tcpTransport, insecure: true, raft: benchRaft})
				l := c.leader()
				var stores []claim.Store
				for i, n := range c.nodes {
					if where == "leader" && i != l {
						continue
					}
					s, err := NewClaimStore(n)
					require.NoError(b, err)
					defer func() { _ = s.Close() }()
					stores = append(stores, s)
				}
				burn(b, stores, workers, c.nodes[l])
			})
		}
	}
}

// burn fills the queue and burns it down with workers spread over stores,
// b.N times. With the leader, it also reports how many commands (claims
// and settlements) shared a log entry.
func burn(b *testing.B, stores []claim.Store, workers int, leader *Node) {
	ctx := context.Background()
	var elapsed time.Duration
	var entries uint64
	for i := range b.N {
		queue := fmt.Sprint("burn-", i)
		batch := make([]claim.NewItem, 500)
		for j := range batch {
			batch[j] = claim.NewItem{Queue: queue, MaxAttempts: 3, Payload: []byte("0123456789abcdef")}
		}
		for range burnItems / len(batch) {
			_, err := stores[0].Enqueue(ctx, batch)
			require.NoError(b, err)
		}
		var done atomic.Int64
		var wg sync.WaitGroup
		var first uint64
		if leader != nil {
			first = leader.raft.LastIndex()
		}
		start := time.Now()
		for w := range workers {
			s := stores[w%len(stores)]
			wg.Go(func() {
				for {
					cs, err := s.Claim(ctx, claim.ClaimRequest{Queue: queue, Owner: "bench", Limit: 1, Lease: time.Minute})
					if err != nil {
						b.Error(err)
						return
					}
					if len(cs) == 0 {
						return // the rest is held by other workers
					}
					if err := s.Settle(ctx, claim.Settlement{Ref: cs[0].Ref, How: claim.SettleComplete}); err != nil {
						b.Error(err)
						return
					}
					done.Add(1)
				}
			})
		}
		wg.Wait()
		elapsed += time.Since(start)
		if leader != nil {
			entries += leader.raft.LastIndex() - first
		}
		require.Equal(b, int64(burnItems), done.Load())
	}
	b.ReportMetric(float64(burnItems*b.N)/elapsed.Seconds(), "items/s")
	if leader != nil {
		b.ReportMetric(float64(2*burnItems*b.N)/float64(entries), "cmds/entry")
	}
}
