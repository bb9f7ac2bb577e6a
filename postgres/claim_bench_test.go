package postgres

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// benchPoolSize is the pool every claim benchmark uses, as in the
// comparison with River: 4 connections.
const benchPoolSize = 4

func benchClaimStore(b *testing.B, opts ...ClaimOption) *ClaimStore {
	b.Helper()
	pool := newPool(b, "lease-claims-bench", func(c *pgxpoolConfig) { c.MaxConns = benchPoolSize })
	return claimStoreOn(b, pool, append([]ClaimOption{WithClaimTable(uniqueTable())}, opts...)...)
}

func noopItems(queue string, n int) []claim.NewItem {
	items := make([]claim.NewItem, n)
	for i := range items {
		items[i] = claim.NewItem{Queue: queue, Payload: []byte(`{"n":` + strconv.Itoa(i) + `}`), MaxAttempts: 3}
	}
	return items
}

// BenchmarkClaimBurnDown drains b.N queued no-op items with 100 goroutines,
// each looping Claim (up to k items) then Settle(Complete) of each; jobs/s
// is items completed per second.
func BenchmarkClaimBurnDown(b *testing.B) {
	for _, k := range []int{1, 10} {
		for _, f := range []int{1, 2} {
			b.Run(fmt.Sprintf("workers=100/k=%d/flushers=%d", k, f), func(b *testing.B) {
				benchBurnDown(b, k, WithFlushers(f))
			})
		}
	}
	// Completed items kept: each completion updates its row rather than
	// deleting it, and the claim index, partial on the claimable states,
	// never holds the finished rows.
	b.Run("workers=100/k=10/flushers=1/retained", func(b *testing.B) {
		benchBurnDown(b, 10, WithRetention(claim.StandardRetention))
	})
}

// benchBurnDown is one run of BenchmarkClaimBurnDown with k items per claim.
func benchBurnDown(b *testing.B, k int, opts ...ClaimOption) {
	s := benchClaimStore(b, opts...)
	_, err := s.Enqueue(ctx, noopItems("q", b.N))
	require.NoError(b, err)
	// As autovacuum would soon after such an insert: the plans
	// are those of a table with statistics.
	_, err = s.pool.Exec(ctx, "ANALYZE "+s.table)
	require.NoError(b, err)
	var done atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range 100 {
		wg.Go(func() {
			owner := "w" + strconv.Itoa(w)
			for {
				cs, err := s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: owner, Limit: k, Lease: time.Minute})
				if err != nil {
					b.Error(err)
					return
				}
				if len(cs) == 0 {
					return
				}
				// The claims are settled concurrently, as the handlers
				// of a worker running k at a time would: the store
				// coalesces them.
				var settled sync.WaitGroup
				for _, c := range cs {
					settled.Go(func() {
						if err := s.Settle(ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleComplete}); err != nil {
							b.Error(err)
							return
						}
						done.Add(1)
					})
				}
				settled.Wait()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	require.EqualValues(b, b.N, done.Load())
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
}

// BenchmarkClaimEnqueue enqueues 100,000 items in one Enqueue per op.
func BenchmarkClaimEnqueue(b *testing.B) {
	const n = 100_000
	s := benchClaimStore(b)
	items := noopItems("q", n)
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		_, err := s.Enqueue(ctx, items)
		elapsed += time.Since(start)
		require.NoError(b, err)
	}
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "items/s")
}

// BenchmarkClaimPickup measures the time from Enqueue of one item into an
// idle queue to the return of the Claim of a worker that was waiting on
// Notify: p50 and p99 in microseconds.
func BenchmarkClaimPickup(b *testing.B) {
	benchPickup(b, benchClaimStore(b))
}

// BenchmarkClaimPickupAfterBurnDown is BenchmarkClaimPickup on a table
// where 50,000 items were just completed, kept (retained) or deleted: the
// finished rows must not slow the next claim.
func BenchmarkClaimPickupAfterBurnDown(b *testing.B) {
	b.Run("retained", func(b *testing.B) {
		pickupAfterBurnDown(b, benchClaimStore(b, WithRetention(claim.StandardRetention)))
	})
	b.Run("deleted", func(b *testing.B) { pickupAfterBurnDown(b, benchClaimStore(b)) })
}

func pickupAfterBurnDown(b *testing.B, s *ClaimStore) {
	const n = 50_000
	_, err := s.Enqueue(ctx, noopItems("q", n))
	require.NoError(b, err)
	for done := 0; done < n; {
		cs, err := s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1000, Lease: time.Minute})
		require.NoError(b, err)
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Go(func() { require.NoError(b, s.Settle(ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleComplete})) })
		}
		wg.Wait()
		done += len(cs)
	}
	if s.cfg.retention.Completed > 0 {
		c, err := s.Counts(ctx, "q")
		require.NoError(b, err)
		require.Equal(b, n, c.Completed)
	}
	if os.Getenv("LEASE_EXPLAIN") != "" {
		explainClaim(b, s)
	}
	benchPickup(b, s)
}

// benchPickup measures pickups on s.
func benchPickup(b *testing.B, s *ClaimStore) {
	got := make(chan time.Time)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			ready, stop := s.Notify("q")
			cs, err := s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: time.Minute})
			if err != nil {
				stop()
				b.Error(err)
				return
			}
			if len(cs) == 0 {
				select {
				case <-ready:
				case <-quit:
					stop()
					return
				}
				stop()
				continue
			}
			stop()
			at := time.Now()
			if err := s.Settle(ctx, claim.Settlement{Ref: cs[0].Ref, How: claim.SettleComplete}); err != nil {
				b.Error(err)
				return
			}
			got <- at
		}
	})
	// Let the listener start before measuring.
	ready, stop := s.Notify("q")
	<-ready
	stop()
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		_, err := s.Enqueue(ctx, []claim.NewItem{{Queue: "q", MaxAttempts: 1}})
		require.NoError(b, err)
		lat = append(lat, (<-got).Sub(start))
	}
	close(quit)
	wg.Wait()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// explainClaim logs the plan of an empty claim, for looking into pickup
// latency (LEASE_EXPLAIN=1).
func explainClaim(b *testing.B, s *ClaimStore) {
	rows, err := s.pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+s.sql.claim, "q", []string{"w"}, []int64{60_000_000}, []int64{1}, int64(1), s.table)
	require.NoError(b, err)
	for rows.Next() {
		var line string
		require.NoError(b, rows.Scan(&line))
		b.Log(line)
	}
	require.NoError(b, rows.Err())
}
