package sqlclaim

import (
	"context"
	"sync"
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

func newCallerBatcher(gather bool) *callerBatcher {
	cb := &callerBatcher{started: make(chan callerBatch, 16), release: make(chan struct{})}
	cb.b = NewBatcher(BatcherConfig{Max: 10, Flushers: 1, Gather: gather, CallerRuns: true, Closed: closedErr},
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

// TestBatcherCallerRunsBeforeClose: the flushers end only after a batch
// that a caller runs, so that nothing runs once they are waited for.
func TestBatcherCallerRunsBeforeClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := newCallerBatcher(false)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		cb.b.Start(ctx, &wg)
		var callers sync.WaitGroup
		callers.Go(func() { _, _ = cb.b.Do(context.Background(), &Call[int, int]{Req: 1}) })
		<-cb.started
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
