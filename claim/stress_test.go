package claim_test

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// TestStressEveryItemEndsExactlyOnce runs claimers that complete, fail,
// abandon and heartbeat concurrently with a producer and with a goroutine
// that advances the fake clock, so lease expiries and backoffs land in the
// middle of everything. At the end every enqueued item must have been
// completed exactly once or be dead, never both.
func TestStressEveryItemEndsExactlyOnce(t *testing.T) {
	const (
		items    = 2000
		claimers = 4
		lease    = 10 * time.Millisecond
		maxSteps = 200_000
	)
	b, _, clk := newBroker(t, claim.WithMaxAttempts(3))

	var enqueued sync.Map // ItemID -> true
	for i := range items / 2 {
		enqueued.Store(enqueue(t, b, q, "first", claim.Key(strconv.Itoa(i))).ID, true)
	}

	var (
		wg        sync.WaitGroup
		done      = make(chan struct{})
		produced  = make(chan struct{})
		completed = make([]map[claim.ItemID]int, claimers)
		stale     atomic.Int64
	)
	wg.Go(func() { // producer
		defer close(produced)
		for range items / 2 {
			it, err := b.Enqueue(ctx, q, []byte("second"))
			if !assert.NoError(t, err) {
				return
			}
			enqueued.Store(it.ID, true)
		}
	})
	for w := range claimers {
		completed[w] = map[claim.ItemID]int{}
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			owner := string(rune('a' + w))
			for {
				select {
				case <-done:
					return
				default:
				}
				cs, err := b.Claim(ctx, q, owner, 1+rng.IntN(4), lease)
				if !assert.NoError(t, err) {
					return
				}
				if len(cs) == 0 {
					runtime.Gosched()
					continue
				}
				for _, c := range cs {
					switch r := rng.IntN(100); {
					case r < 45:
						if b.Complete(ctx, c) == nil {
							completed[w][c.Item]++
						} else {
							stale.Add(1)
						}
					case r < 70:
						if _, err := b.Fail(ctx, c, "boom", time.Millisecond, 4*time.Millisecond); err != nil {
							stale.Add(1)
						}
					case r < 85: // abandon: the lease expires
					default: // heartbeat racing complete on the same claim
						var hb sync.WaitGroup
						hb.Go(func() { _, _ = b.Heartbeat(ctx, c, lease) })
						if b.Complete(ctx, c) == nil {
							completed[w][c.Item]++
						}
						hb.Wait()
					}
				}
			}
		})
	}
	wg.Go(func() { // the clock
		defer close(done)
		<-produced
		for range maxSteps {
			clk.Advance(time.Millisecond)
			c := countsOf(t, b, q)
			if c.Visible+c.Delayed+c.Claimed == 0 {
				return
			}
			runtime.Gosched()
		}
		t.Errorf("items still pending after %d steps: %+v", maxSteps, countsOf(t, b, q))
	})
	wg.Wait()

	ended := map[claim.ItemID]string{}
	for w := range claimers {
		for id, n := range completed[w] {
			require.Equal(t, 1, n, "item %d completed %d times by one claimer", id, n)
			require.NotContains(t, ended, id, "item %d completed twice", id)
			ended[id] = "completed"
		}
	}
	for _, it := range listDead(t, b, q) {
		require.NotContains(t, ended, it.ID, "item %d completed and dead", it.ID)
		require.Equal(t, 3, it.Attempts)
		ended[it.ID] = "dead"
	}
	n := 0
	enqueued.Range(func(k, _ any) bool {
		n++
		assert.Contains(t, ended, k.(claim.ItemID))
		return true
	})
	assert.Equal(t, items, n)
	assert.Len(t, ended, items, "nothing ended that was not enqueued")
	t.Logf("completed %d, dead %d, stale calls %d", len(ended)-len(listDead(t, b, q)), len(listDead(t, b, q)), stale.Load())
}
