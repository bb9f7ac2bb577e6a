package sqlclaim

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callerBatcher is a CallerRuns batcher whose batches wait for release,
// whatever becomes of any context, and report on started the requests of
// each batch and whether its caller ran it.
type callerBatcher struct {
	b       *Batcher[int, int]
	started chan callerBatch
	release chan struct{}
}

type callerBatch struct {
	reqs     []int
	byCaller bool
	flusher  bool // run under the flushers' context
}

type flusherKey struct{}

func newCallerBatcher(gather bool) *callerBatcher { return newCallerBatcherOf(1, gather) }

// newCallerBatcherOf returns a callerBatcher of flushers flushers.
func newCallerBatcherOf(flushers int, gather bool) *callerBatcher {
	cb := &callerBatcher{started: make(chan callerBatch, 16), release: make(chan struct{})}
	cb.b = NewBatcher(BatcherConfig{Max: 10, Flushers: flushers, Gather: gather, CallerRuns: true, Closed: closedErr},
		func(ctx context.Context, batch []*Call[int, int]) error {
			b := callerBatch{byCaller: batch[0].ByCaller(), flusher: ctx.Value(flusherKey{}) != nil}
			for _, c := range batch {
				b.reqs = append(b.reqs, c.Req)
				c.Res = 2 * c.Req
			}
			cb.started <- b
			<-cb.release
			return nil
		})
	return cb
}

// TestBatcherCallerRuns: a call that finds the batcher idle runs its batch
// on its own goroutine, under the flushers' context; the flusher takes
// nothing while it runs, and the calls that came meanwhile share the next
// batch, on the flusher. A caller whose context ends while it runs its
// batch waits for the batch and gets its answer.
func TestBatcherCallerRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := newCallerBatcher(false)
		ctx, cancel := context.WithCancel(context.WithValue(t.Context(), flusherKey{}, true))
		defer cancel()
		var wg sync.WaitGroup
		cb.b.Start(ctx, &wg)

		first, firstCancel := context.WithCancel(context.Background())
		var firstRes int
		var firstErr error
		var callers sync.WaitGroup
		callers.Go(func() { firstRes, firstErr = cb.b.Do(first, &Call[int, int]{Req: 1}) })
		assert.Equal(t, callerBatch{reqs: []int{1}, byCaller: true, flusher: true}, <-cb.started)

		results := make([]int, 2)
		for i := range results {
			callers.Go(func() { results[i], _ = cb.b.Do(context.Background(), &Call[int, int]{Req: 11 + i}) })
		}
		firstCancel()
		synctest.Wait()
		assert.Equal(t, 2, cb.b.Pending(), "the flusher takes nothing while a caller runs its batch")
		assert.Empty(t, cb.started)

		cb.release <- struct{}{}
		b := <-cb.started
		assert.ElementsMatch(t, []int{11, 12}, b.reqs, "the calls that came meanwhile share the next batch")
		assert.False(t, b.byCaller)
		cb.release <- struct{}{}
		callers.Wait()
		require.NoError(t, firstErr, "the caller that gave up waited for its batch")
		assert.Equal(t, 2, firstRes)
		assert.Equal(t, []int{22, 24}, results)
		assert.EqualValues(t, 2, cb.b.Batches())
		assert.EqualValues(t, 1, cb.b.CallerBatches())

		// A caller whose context has ended runs nothing.
		_, err := cb.b.Do(first, &Call[int, int]{Req: 3})
		assert.ErrorIs(t, err, context.Canceled)
		assert.EqualValues(t, 2, cb.b.Batches())
	})
}

// TestBatcherCallerRunsBeforeClose: the flushers, one or several, end
// only after a batch that a caller runs, so that nothing runs once they
// are waited for.
func TestBatcherCallerRunsBeforeClose(t *testing.T) {
	for _, flushers := range []int{1, 3} {
		t.Run(fmt.Sprint(flushers, " flushers"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cb := newCallerBatcherOf(flushers, false)
				ctx, cancel := context.WithCancel(t.Context())
				var wg sync.WaitGroup
				cb.b.Start(ctx, &wg)
				var callers sync.WaitGroup
				callers.Go(func() { _, _ = cb.b.Do(context.Background(), &Call[int, int]{Req: 1}) })
				assert.True(t, (<-cb.started).byCaller)
				cancel()
				ended := make(chan struct{})
				go func() {
					wg.Wait()
					close(ended)
				}()
				synctest.Wait()
				requireOpen(t, ended)
				cb.release <- struct{}{}
				callers.Wait()
				synctest.Wait()
				requireClosed(t, ended)
				_, err := cb.b.Do(context.Background(), &Call[int, int]{Req: 2})
				assert.ErrorIs(t, err, errClosed)
			})
		})
	}
}

// TestBatcherCallerRunsClosed: a batch that its caller runs and that fails
// because the batcher's context ended is answered with the Closed error,
// as a flusher's is.
func TestBatcherCallerRunsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bb := newBlockingBatcher(BatcherConfig{Max: 4, Flushers: 2, CallerRuns: true})
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		bb.b.Start(ctx, &wg)
		var err error
		var callers sync.WaitGroup
		callers.Go(func() { _, err = bb.b.Do(context.Background(), &Call[int, int]{Req: 1}) })
		assert.Equal(t, []int{1}, <-bb.started)
		assert.EqualValues(t, 1, bb.b.CallerBatches())
		cancel()
		callers.Wait()
		assert.ErrorIs(t, err, errClosed)
		wg.Wait()
	})
}

// gatedBatcher is a CallerRuns batcher of several flushers whose batches,
// of one call each, wait each for its own gate, and which counts the
// batches under way.
type gatedBatcher struct {
	b       *Batcher[int, int]
	started chan gatedBatch
	gates   map[int]chan struct{} // by request; not changed once made
	running atomic.Int32
	most    atomic.Int32 // the most batches under way at once
}

type gatedBatch struct {
	req      int
	byCaller bool
	onDo     bool // run on the goroutine of a call of Do
}

func newGatedBatcher(flushers int, reqs ...int) *gatedBatcher {
	gb := &gatedBatcher{started: make(chan gatedBatch, len(reqs)), gates: map[int]chan struct{}{}}
	for _, r := range reqs {
		gb.gates[r] = make(chan struct{})
	}
	gb.b = NewBatcher(BatcherConfig{Max: 1, Flushers: flushers, CallerRuns: true, Closed: closedErr},
		func(ctx context.Context, batch []*Call[int, int]) error {
			n := gb.running.Add(1)
			defer gb.running.Add(-1)
			for m := gb.most.Load(); n > m && !gb.most.CompareAndSwap(m, n); m = gb.most.Load() {
			}
			c := batch[0]
			onDo := strings.Contains(string(debug.Stack()), ").Do(")
			gb.started <- gatedBatch{req: c.Req, byCaller: c.ByCaller(), onDo: onDo}
			<-gb.gates[c.Req]
			c.Res = 2 * c.Req
			return nil
		})
	return gb
}

// TestBatcherCallerRunsFlushers: with several flushers, a call that finds
// the batcher idle runs its batch on its caller's goroutine, and counts as
// one of the Flushers batches under way: while it runs, the flushers run
// at most Flushers-1 others, and as it ends one of them takes the next.
func TestBatcherCallerRunsFlushers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const flushers = 3
		gb := newGatedBatcher(flushers, 1, 11, 12, 13, 14)
		var wg sync.WaitGroup
		ctx, cancel := context.WithCancel(t.Context())
		defer func() {
			cancel()
			wg.Wait()
		}()
		gb.b.Start(ctx, &wg)

		results := map[int]int{}
		var mu sync.Mutex
		var callers sync.WaitGroup
		call := func(req int) {
			callers.Go(func() {
				res, err := gb.b.Do(context.Background(), &Call[int, int]{Req: req})
				assert.NoError(t, err)
				mu.Lock()
				results[req] = res
				mu.Unlock()
			})
		}
		call(1)
		assert.Equal(t, gatedBatch{req: 1, byCaller: true, onDo: true}, <-gb.started, "on its caller's goroutine")
		for _, r := range []int{11, 12, 13, 14} {
			call(r)
			synctest.Wait()
		}
		for _, r := range []int{11, 12} {
			assert.Equal(t, gatedBatch{req: r}, <-gb.started, "on a flusher's goroutine")
		}
		synctest.Wait()
		assert.Empty(t, gb.started, "Flushers-1 batches besides the caller's")
		assert.Equal(t, 2, gb.b.Pending())
		assert.EqualValues(t, flushers, gb.running.Load())

		close(gb.gates[1]) // the caller's batch ends: a flusher takes the next
		assert.Equal(t, gatedBatch{req: 13}, <-gb.started)
		synctest.Wait()
		assert.Empty(t, gb.started)
		assert.Equal(t, 1, gb.b.Pending())

		for _, r := range []int{11, 12, 13, 14} {
			close(gb.gates[r])
		}
		assert.Equal(t, gatedBatch{req: 14}, <-gb.started)
		callers.Wait()
		assert.Equal(t, map[int]int{1: 2, 11: 22, 12: 24, 13: 26, 14: 28}, results)
		assert.EqualValues(t, flushers, gb.most.Load())
		assert.EqualValues(t, 5, gb.b.Batches())
		assert.EqualValues(t, 1, gb.b.CallerBatches())
	})
}

// TestBatcherCallerRunsNotWhenLate: once a call came while a batch was
// under way, the next lone call goes to the flusher, which may gather it
// with another, rather than run on its caller's goroutine. (Real time:
// the flusher's wait for a second call spins, which a synctest bubble's
// clock would never see end.)
func TestBatcherCallerRunsNotWhenLate(t *testing.T) {
	cb := newCallerBatcher(true)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(t.Context())
	defer func() {
		cancel()
		wg.Wait()
	}()
	cb.b.Start(ctx, &wg)
	var callers sync.WaitGroup
	callers.Go(func() { _, _ = cb.b.Do(context.Background(), &Call[int, int]{Req: 1}) })
	assert.True(t, (<-cb.started).byCaller)
	callers.Go(func() { _, _ = cb.b.Do(context.Background(), &Call[int, int]{Req: 2}) })
	require.Eventually(t, func() bool { return cb.b.Pending() == 1 }, 10*time.Second, time.Millisecond)
	cb.release <- struct{}{}
	assert.False(t, (<-cb.started).byCaller)
	cb.release <- struct{}{}
	callers.Wait()
	callers.Go(func() { _, _ = cb.b.Do(context.Background(), &Call[int, int]{Req: 3}) })
	assert.False(t, (<-cb.started).byCaller, "a caller was late: the flusher runs the next call")
	cb.release <- struct{}{}
	callers.Wait()
}

type callerKey struct{}

// TestCallerBound: the statements of a batch that its caller runs stop
// when either the batcher's context or the caller's ends, and see the
// caller's values; those of any other batch run under the batcher's.
func TestCallerBound(t *testing.T) {
	for _, ending := range []string{"batcher", "caller"} {
		t.Run(ending, func(t *testing.T) {
			batcher, cancelBatcher := context.WithCancel(t.Context())
			defer cancelBatcher()
			caller, cancelCaller := context.WithCancel(context.WithValue(t.Context(), callerKey{}, "caller"))
			defer cancelCaller()
			c := &Call[int, int]{caller: caller, byCaller: true}
			bound, stop := CallerBound(batcher, []*Call[int, int]{c})
			defer stop()
			assert.Equal(t, "caller", bound.Value(callerKey{}))
			require.NoError(t, bound.Err())
			if ending == "batcher" {
				cancelBatcher()
			} else {
				cancelCaller()
			}
			<-bound.Done()
			assert.ErrorIs(t, bound.Err(), context.Canceled)
		})
	}
	// A caller's context that never ends still lends its values.
	batcher, cancelBatcher := context.WithCancel(t.Context())
	endless := context.WithValue(context.Background(), callerKey{}, "endless")
	bound, stop := CallerBound(batcher, []*Call[int, int]{{caller: endless, byCaller: true}})
	assert.Equal(t, "endless", bound.Value(callerKey{}))
	cancelBatcher()
	<-bound.Done()
	stop()

	batcher = t.Context()
	c := &Call[int, int]{caller: context.WithValue(t.Context(), callerKey{}, "caller")}
	bound, stop = CallerBound(batcher, []*Call[int, int]{c})
	stop()
	assert.Equal(t, batcher, bound, "a flusher's batch")
	c.byCaller = true
	bound, stop = CallerBound(batcher, []*Call[int, int]{c, {caller: t.Context()}})
	stop()
	assert.Equal(t, batcher, bound, "a batch of two")
}
