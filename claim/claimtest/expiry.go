package claimtest

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// expiryEvent is a claim, or a successful call on one, in the
// ConcurrentExpiry clause, stamped on a shared logical clock.
type expiryEvent struct {
	attempt   int
	call, ret int64
}

// testConcurrentExpiry: goroutines claim items with short leases and, at
// random, complete them, extend and then complete them, or abandon them to
// expire (and try some of those again later, live or stale), while time
// moves (the goroutines advance a fake clock now and then, and whenever
// nothing is claimable; a real one runs). Every item is completed exactly once, its claims have the attempts
// 1, 2, ... each once, and no call on a claim succeeds if it began after a
// later claim of the item had been handed out.
func testConcurrentExpiry(e *env) {
	q := queue(0)
	n := e.scale(200, 20)
	var items []claim.NewItem
	for i := range n {
		it := newItem(q, strconv.Itoa(i))
		it.MaxAttempts = 1000
		items = append(items, it)
	}
	e.enqueue(items...)
	var (
		clock     atomic.Int64
		mu        sync.Mutex
		claims    = map[claim.ItemID][]expiryEvent{}
		successes = map[claim.ItemID][]expiryEvent{} // Extend and Settle that succeeded
		completed = map[claim.ItemID]int{}
		done      = make(chan struct{})
		finished  atomic.Int32
		failed    atomic.Pointer[string]
		wg        sync.WaitGroup
	)
	fail := func(msg string) { failed.CompareAndSwap(nil, &msg) }
	stop := func() bool {
		select {
		case <-done:
			return true
		default:
			return failed.Load() != nil
		}
	}
	for w := range workers() {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			owner := "w" + strconv.Itoa(w)
			var abandoned []claim.Claim // the newest few, tried again later
			first := true               // the first claim, never settled
			// settle completes c, or extends and then completes it, and
			// records what succeeded.
			settle := func(c claim.Claim, extend bool) {
				if extend {
					call := clock.Add(1)
					_, err := e.s.Extend(e.ctx, c.Ref, e.short())
					ret := clock.Add(1)
					if err != nil {
						return // lost meanwhile
					}
					mu.Lock()
					successes[c.Item] = append(successes[c.Item], expiryEvent{c.Attempt, call, ret})
					mu.Unlock()
				}
				call := clock.Add(1)
				err := e.s.Settle(e.ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleComplete})
				ret := clock.Add(1)
				if err != nil {
					return // lost meanwhile
				}
				mu.Lock()
				defer mu.Unlock()
				successes[c.Item] = append(successes[c.Item], expiryEvent{c.Attempt, call, ret})
				completed[c.Item]++
				if len(completed) == n && finished.CompareAndSwap(0, 1) {
					close(done)
				}
			}
			for !stop() {
				if len(abandoned) > 0 && rng.IntN(4) == 0 {
					i := rng.IntN(len(abandoned))
					c := abandoned[i]
					abandoned = append(abandoned[:i], abandoned[i+1:]...)
					settle(c, rng.IntN(2) == 0)
				}
				if e.fake() && rng.IntN(8) == 0 {
					// Time moves with the work, so that claims
					// expire now and then, not all the time.
					e.adv.Advance(e.short() / 8)
				}
				ready, stopWait := e.s.Notify(q)
				call := clock.Add(1)
				got, err := e.s.Claim(e.ctx, claim.ClaimRequest{Queue: q, Owner: owner, Limit: 1, Lease: e.short()})
				ret := clock.Add(1)
				if err != nil {
					stopWait()
					fail("Claim: " + err.Error())
					return
				}
				if len(got) == 0 && e.fake() {
					// Every item is claimed: let the abandoned
					// claims expire.
					stopWait()
					e.adv.Advance(e.short() / 2)
					continue
				}
				if len(got) == 0 {
					select {
					case <-ready:
					case <-done:
					case <-time.After(wakeLimit):
						fail("Notify: no wake-up within " + wakeLimit.String() + " while items remained")
					}
					stopWait()
					continue
				}
				stopWait()
				c := got[0]
				mu.Lock()
				claims[c.Item] = append(claims[c.Item], expiryEvent{c.Attempt, call, ret})
				mu.Unlock()
				if first {
					// Left to expire for sure: however the random
					// choices fall, some claim runs out and its item
					// is claimed again.
					first = false
					continue
				}
				switch rng.IntN(3) {
				case 0: // abandoned: its lease expires, unless tried again in time
					abandoned = append(abandoned, c)
					if len(abandoned) > 4 {
						abandoned = abandoned[1:]
					}
				case 1:
					settle(c, true)
				default:
					settle(c, false)
				}
			}
		})
	}
	wg.Wait()
	if msg := failed.Load(); msg != nil {
		e.Fatal(*msg)
	}
	require.Len(e, completed, n, "every item was completed")
	for id, times := range completed {
		assert.Equal(e, 1, times, "item %d completed more than once", id)
	}
	reclaimed := 0
	for id, cs := range claims {
		if len(cs) > 1 {
			reclaimed++
		}
		slices.SortFunc(cs, func(a, b expiryEvent) int { return cmp.Compare(a.attempt, b.attempt) })
		for i, c := range cs {
			if !assert.Equal(e, i+1, c.attempt, "item %d: the attempts of its claims are 1, 2, ... each once", id) {
				break
			}
		}
		for _, s := range successes[id] {
			for _, c := range cs {
				if c.attempt > s.attempt && c.ret < s.call {
					e.Errorf("item %d: a call on attempt %d succeeded though attempt %d was claimed before it began", id, s.attempt, c.attempt)
				}
			}
		}
	}
	assert.Positive(e, reclaimed, "no item was claimed twice: the clause saw no expiry")
	assert.Equal(e, claim.Counts{}, e.counts(q), "the queue ends empty")
}
