package locktest

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/lock"
)

// workers is how many goroutines contend: enough to keep every core busy
// and to queue some behind them.
func workers() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// testConcurrentAcquirers: in every round, goroutines released together race
// for one name and exactly one wins.
func testConcurrentAcquirers(e *env) {
	n := workers()
	rounds := e.scale(300, 40)
	for r := range rounds {
		start := make(chan struct{})
		var wg sync.WaitGroup
		results := make([]*lock.Lease, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				<-start
				results[i], errs[i] = e.p.Acquire(e.ctx, "contended", "w"+strconv.Itoa(i), e.d)
			})
		}
		close(start)
		wg.Wait()
		var winners []lock.Lease
		for i := range n {
			require.NoError(e, errs[i], "round %d worker %d", r, i)
			if results[i] != nil {
				winners = append(winners, *results[i])
			}
		}
		require.Len(e, winners, 1, "round %d: exactly one of %d acquirers must win", r, n)
		e.release(winners[0])
	}
}

// testReleaseRacesRenew: Release and Renew of the same lease, run together,
// both succeed and leave the lock free.
func testReleaseRacesRenew(e *env) {
	rounds := e.scale(300, 40)
	for r := range rounds {
		l := e.acquire(name(0), "a", e.d)
		start := make(chan struct{})
		var wg sync.WaitGroup
		var renewErr, releaseErr error
		var renewed []lock.Lease
		wg.Go(func() { <-start; renewed, renewErr = e.p.Renew(e.ctx, []lock.Lease{l}, e.d) })
		wg.Go(func() { <-start; releaseErr = e.p.Release(e.ctx, []lock.Lease{l}) })
		close(start)
		wg.Wait()
		require.NoError(e, renewErr, "round %d: Renew racing Release", r)
		require.NoError(e, releaseErr, "round %d: Release racing Renew", r)
		for _, got := range renewed {
			assert.True(e, sameHolding(l, got), "round %d: Renew returned another holding", r)
		}
		e.release(e.acquire(name(0), "b", e.d))
	}
}

// testLinearizable: goroutines acquire, renew and release one lock, with
// their current and their stale leases, and the recorded history must be
// linearizable against a single-lock model. Workers also count themselves
// in and out of the critical section, which must never hold two.
func testLinearizable(e *env) {
	n := workers()
	perWorker := e.scale(200, 40)
	var (
		clock   atomic.Int64 // orders calls and returns across goroutines
		inside  atomic.Int32
		overlap atomic.Int32
		mu      sync.Mutex
		history []porcupine.Operation
	)
	record := func(op porcupine.Operation) {
		mu.Lock()
		history = append(history, op)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			exec := "w" + strconv.Itoa(w)
			var cur, stale *lock.Lease
			for range perWorker {
				in := modelInput{exec: exec}
				var target lock.Lease
				switch k := rng.IntN(10); {
				case cur == nil && (stale == nil || k < 7):
					in.kind = opAcquire
				case cur == nil:
					in.kind, target = opRelease, *stale
					if k == 9 {
						in.kind = opRenew
					}
				case k < 4:
					in.kind, target = opRenew, *cur
				default:
					in.kind, target = opRelease, *cur
				}
				in.token = target.Token
				call := clock.Add(1)
				var out modelOutput
				switch in.kind {
				case opAcquire:
					l, err := e.p.Acquire(e.ctx, "linear", exec, e.d)
					out.err = err != nil
					if l != nil {
						if inside.Add(1) > 1 {
							overlap.Add(1)
						}
						out.ok, out.token, cur = true, l.Token, l
					}
				case opRenew:
					got, err := e.p.Renew(e.ctx, []lock.Lease{target}, e.d)
					out.err = err != nil
					out.ok = len(got) == 1
				case opRelease:
					if cur != nil && target.Token == cur.Token {
						inside.Add(-1) // leave before the lock is free
						stale, cur = cur, nil
					}
					out.err = e.p.Release(e.ctx, []lock.Lease{target}) != nil
				}
				record(porcupine.Operation{ClientId: w, Input: in, Call: call, Output: out, Return: clock.Add(1)})
			}
			if cur != nil { // leave the lock free, on the record
				inside.Add(-1)
				in := modelInput{kind: opRelease, exec: exec, token: cur.Token}
				call := clock.Add(1)
				err := e.p.Release(e.ctx, []lock.Lease{*cur})
				record(porcupine.Operation{ClientId: w, Input: in, Call: call, Output: modelOutput{err: err != nil}, Return: clock.Add(1)})
			}
		})
	}
	wg.Wait()
	require.Zero(e, overlap.Load(), "two workers were inside the critical section at once")
	res := porcupine.CheckOperationsTimeout(singleLock, history, 20*time.Second)
	if res != porcupine.Ok {
		e.Errorf("history of %d operations is %s against a single lock", len(history), res)
		describeIllegal(e, history)
	}
}
