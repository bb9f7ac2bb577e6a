package replicated

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/leasehold/lease"
)

// The write benchmarks run 3 nodes on TCP over loopback with bolt stores
// (fsync on), and 64 client goroutines on the leader.
func benchCluster(b *testing.B) *Node {
	c := newCluster(b, clusterOpts{stores: boltStores, transport: tcpTransport, raft: benchRaft})
	return c.nodes[c.leader()]
}

func benchRaft(rc *raft.Config) {
	rc.SnapshotThreshold = 1 << 30 // no snapshot in the middle of a run
	// raft's LAN defaults: the tests' short timeouts lose leadership when
	// the benchmark saturates both cores.
	def := raft.DefaultConfig()
	rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = def.HeartbeatTimeout, def.ElectionTimeout, def.LeaderLeaseTimeout
}

func runParallel(b *testing.B, body func(ctx context.Context, n *Node, worker int64) error) {
	n := benchCluster(b)
	ctx := context.Background()
	var workers atomic.Int64
	b.SetParallelism(32) // 64 goroutines on 2 cores
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := workers.Add(1)
		for pb.Next() {
			if err := body(ctx, n, w); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkGrantRevoke: one op is a grant and the revoke of that lease.
func BenchmarkGrantRevoke(b *testing.B) {
	runParallel(b, func(ctx context.Context, n *Node, _ int64) error {
		l, err := n.Grant(ctx, "bench", lease.Operation, time.Minute)
		if err != nil {
			return err
		}
		_, err = n.Revoke(ctx, l.ID)
		return err
	})
}

// BenchmarkGrantPut: one op is a grant and a put of one key to its lease.
func BenchmarkGrantPut(b *testing.B) {
	var seq atomic.Int64
	runParallel(b, func(ctx context.Context, n *Node, _ int64) error {
		l, err := n.Grant(ctx, "bench", lease.Operation, time.Minute)
		if err != nil {
			return err
		}
		return n.Put(ctx, "key/"+strconv.FormatInt(seq.Add(1), 10), []byte("value"), l.ID)
	})
}

// BenchmarkRenew: one op is a renewal of the worker's own lease.
func BenchmarkRenew(b *testing.B) {
	ids := make(map[int64]lease.ID)
	var mu = make(chan struct{}, 1)
	runParallel(b, func(ctx context.Context, n *Node, w int64) error {
		mu <- struct{}{}
		id, ok := ids[w]
		<-mu
		if !ok {
			l, err := n.Grant(ctx, "bench", lease.Operation, time.Hour)
			if err != nil {
				return err
			}
			id = l.ID
			mu <- struct{}{}
			ids[w] = id
			<-mu
		}
		_, err := n.Renew(ctx, id)
		return err
	})
}

// BenchmarkExpiryLag grants b.N leases of 50 ms from 8 goroutines on a
// 3-node TCP cluster with bolt stores and reports how late the leader ended
// them after their expiry.
var lagWorkers = 8

func BenchmarkExpiryLag(b *testing.B) {
	c := newCluster(b, clusterOpts{stores: boltStores, transport: tcpTransport, raft: benchRaft})
	n := c.nodes[c.leader()]
	e := watchEnds(n)
	defer e.stop()
	granted := make(map[lease.ID]lease.Lease, b.N)
	var mu sync.Mutex
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for range lagWorkers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				l, err := n.Grant(context.Background(), "lag", lease.Operation, 50*time.Millisecond)
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				granted[l.ID] = l
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	lags := collectEnds(b, e, granted)
	b.StopTimer()
	b.ReportMetric(float64(percentile(lags, .5).Microseconds())/1000, "p50-lag-ms")
	b.ReportMetric(float64(percentile(lags, .99).Microseconds())/1000, "p99-lag-ms")
	b.ReportMetric(float64(lags[len(lags)-1].Microseconds())/1000, "max-lag-ms")
}

// BenchmarkExpiryBurst grants 5,000 leases at once (b.N times) and reports
// how late the leader ended the last of them after its expiry.
func BenchmarkExpiryBurst(b *testing.B) {
	c := newCluster(b, clusterOpts{stores: boltStores, transport: tcpTransport, raft: benchRaft})
	n := c.nodes[c.leader()]
	e := watchEnds(n)
	defer e.stop()
	var worst []time.Duration
	b.ResetTimer()
	for range b.N {
		granted := grantBurst(b, n, 5000, 200*time.Millisecond)
		lags := collectEnds(b, e, granted)
		worst = append(worst, lags[len(lags)-1])
	}
	b.StopTimer()
	slices.Sort(worst)
	b.ReportMetric(float64(worst[len(worst)/2].Microseconds())/1000, "last-of-5000-lag-ms")
}
