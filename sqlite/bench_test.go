package sqlite_test

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

func noopItems(queue string, n int) []claim.NewItem {
	items := make([]claim.NewItem, n)
	for i := range items {
		items[i] = claim.NewItem{Queue: queue, Payload: []byte(`{"n":` + strconv.Itoa(i) + `}`), MaxAttempts: 3}
	}
	return items
}

// BenchmarkBurnDown drains b.N queued no-op items with 100 goroutines of
// one process, each looping Claim (up to k items) then Settle(Complete) of
// each claim from a goroutine of its own (as the handlers of a worker
// running k at a time would), on a file on the test's temporary directory,
// with each durability setting; jobs/s is items completed per second. The
// items are enqueued before the timer starts.
func BenchmarkBurnDown(b *testing.B) {
	for _, mode := range []sqlite.Synchronous{sqlite.SyncFull, sqlite.SyncNormal} {
		for _, k := range []int{1, 10} {
			b.Run(fmt.Sprintf("sync=%v/workers=100/k=%d", mode, k), func(b *testing.B) {
				burnDown(b, k, sqlite.WithSynchronous(mode))
			})
		}
	}
}

func burnDown(b *testing.B, k int, opts ...sqlite.Option) {
	s := newClaimStore(b, tempFile(b), opts...)
	ctx := b.Context()
	_, err := s.Enqueue(ctx, noopItems("q", b.N))
	require.NoError(b, err)
	var done atomic.Int64
	var wg sync.WaitGroup
	before := s.Transactions()
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
	b.StopTimer()
	require.Equal(b, int64(b.N), done.Load())
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
	b.ReportMetric(float64(s.Transactions()-before)/float64(b.N), "commits/job")
}

// BenchmarkEnqueue stores b.N items one Enqueue call each, from 100
// goroutines: their calls share commits.
func BenchmarkEnqueue(b *testing.B) {
	for _, mode := range []sqlite.Synchronous{sqlite.SyncFull, sqlite.SyncNormal} {
		b.Run(fmt.Sprintf("sync=%v/goroutines=100", mode), func(b *testing.B) {
			s := newClaimStore(b, tempFile(b), sqlite.WithSynchronous(mode))
			ctx := b.Context()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range 100 {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						if _, err := s.Enqueue(ctx, noopItems("q", 1)); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

// BenchmarkEnqueueOneCaller stores b.N items one Enqueue call each, from
// one goroutine: each call commits on its own.
func BenchmarkEnqueueOneCaller(b *testing.B) {
	for _, mode := range []sqlite.Synchronous{sqlite.SyncFull, sqlite.SyncNormal} {
		b.Run(fmt.Sprintf("sync=%v", mode), func(b *testing.B) {
			s := newClaimStore(b, tempFile(b), sqlite.WithSynchronous(mode))
			ctx := b.Context()
			items := noopItems("q", 1)
			b.ResetTimer()
			for range b.N {
				if _, err := s.Enqueue(ctx, items); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
