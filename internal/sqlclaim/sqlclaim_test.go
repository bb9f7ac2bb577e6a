package sqlclaim

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/leasehold/lease/claim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errClosed = errors.New("closed")

func closedErr(string) error { return errClosed }

// blockingBatcher is a batcher whose batches wait for release, counting
// what each batch held.
type blockingBatcher struct {
	b       *Batcher[int, int]
	started chan []int // the requests of each batch, as it starts
	release chan struct{}
}

func newBlockingBatcher(cfg BatcherConfig) *blockingBatcher {
	bb := &blockingBatcher{started: make(chan []int, 16), release: make(chan struct{})}
	cfg.Closed = closedErr
	bb.b = NewBatcher(cfg, func(ctx context.Context, batch []*Call[int, int]) error {
		reqs := make([]int, len(batch))
		for i, c := range batch {
			reqs[i] = c.Req
			c.Res = 2 * c.Req
		}
		bb.started <- reqs
		select {
		case <-bb.release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	})
	return bb
}

// TestBatcherCoalesces: calls that arrive while a batch is under way share
// the next one, each item once, each answered with its own result.
func TestBatcherCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bb := newBlockingBatcher(BatcherConfig{Max: 10, Flushers: 1})
		var wg sync.WaitGroup
		bb.b.Start(t.Context(), &wg)
		results := make([]int, 4)
		var callers sync.WaitGroup
		callers.Go(func() {
			results[0], _ = bb.b.Do(context.Background(), &Call[int, int]{Item: 9, Req: 1})
		})
		assert.Equal(t, []int{1}, <-bb.started)
		// Meanwhile, items 1, 2 and 1 again, in that order.
		for i, item := range []claim.ItemID{1, 2, 1} {
			callers.Go(func() {
				results[i+1], _ = bb.b.Do(context.Background(), &Call[int, int]{Item: item, Req: 11 + i})
			})
			synctest.Wait()
		}
		assert.Equal(t, 3, bb.b.Pending())
		bb.release <- struct{}{}
		assert.Equal(t, []int{11, 12}, <-bb.started, "one call per item in a batch")
		bb.release <- struct{}{}
		assert.Equal(t, []int{13}, <-bb.started)
		bb.release <- struct{}{}
		callers.Wait()
		assert.Equal(t, []int{2, 22, 24, 26}, results)
		assert.EqualValues(t, 3, bb.b.Batches())
		bb.b.Close()
		_, err := bb.b.Do(context.Background(), &Call[int, int]{Req: 5})
		assert.ErrorIs(t, err, errClosed, "a closed batcher takes no call")
	})
}

// TestBatcherGivingUp: a caller whose context ends is withdrawn if its call
// was not taken, returns at once if it was, or waits for its batch with
// ToEnd; a batch never runs under a caller's context.
func TestBatcherGivingUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bb := newBlockingBatcher(BatcherConfig{Max: 1, Flushers: 1})
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		bb.b.Start(ctx, &wg)

		first, firstCancel := context.WithCancel(context.Background())
		var firstErr error
		var callers sync.WaitGroup
		callers.Go(func() { _, firstErr = bb.b.Do(first, &Call[int, int]{Req: 1}) })
		assert.Equal(t, []int{1}, <-bb.started)
		firstCancel() // taken: the caller returns, the batch goes on
		synctest.Wait()
		assert.ErrorIs(t, firstErr, context.Canceled)

		pending, pendingCancel := context.WithCancel(context.Background())
		var pendingErr error
		callers.Go(func() { _, pendingErr = bb.b.Do(pending, &Call[int, int]{Req: 2}) })
		synctest.Wait()
		pendingCancel() // not taken: withdrawn
		synctest.Wait()
		assert.ErrorIs(t, pendingErr, context.Canceled)
		assert.Zero(t, bb.b.Pending())

		bb.release <- struct{}{} // the first batch ends
		toEnd, toEndCancel := context.WithCancel(context.Background())
		var toEndRes int
		var toEndErr error
		callers.Go(func() { toEndRes, toEndErr = bb.b.Do(toEnd, &Call[int, int]{Req: 3, ToEnd: true}) })
		assert.Equal(t, []int{3}, <-bb.started, "the withdrawn call never ran")
		toEndCancel()
		synctest.Wait()
		bb.release <- struct{}{}
		callers.Wait()
		require.NoError(t, toEndErr, "ToEnd waits for the batch's answer")
		assert.Equal(t, 6, toEndRes)

		var lateErr error
		callers.Go(func() { _, lateErr = bb.b.Do(context.Background(), &Call[int, int]{Req: 4}) })
		assert.Equal(t, []int{4}, <-bb.started)
		cancel() // the batcher's context: the batch fails as closed
		callers.Wait()
		assert.ErrorIs(t, lateErr, errClosed)
		wg.Wait()
	})
}

// TestHub: waiters of a key share its channel; Wake wakes one key, the
// timer of a key wakes it by its deadline, WakeBy brings it forward, and
// Close wakes everyone for good.
func TestHub(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHub[string]()
		a1, stopA1 := h.Arm("a", nil)
		a2, stopA2 := h.Arm("a", nil)
		b, stopB := h.Arm("b", func() time.Duration { return time.Minute })
		assert.Equal(t, a1, a2)
		assert.Equal(t, 2, h.Keys())
		assert.Equal(t, 3, h.Waiters())
		h.Wake("a")
		requireClosed(t, a1)
		requireOpen(t, b)
		stopA1()
		stopA2()
		stopA2() // twice changes nothing
		assert.Equal(t, 1, h.Waiters())

		h.WakeBy("b", time.Now().Add(time.Second))
		time.Sleep(999 * time.Millisecond)
		requireOpen(t, b)
		time.Sleep(time.Millisecond)
		synctest.Wait()
		requireClosed(t, b)
		stopB()
		assert.Zero(t, h.Keys())
		assert.Zero(t, h.Waiters())

		c, stopC := h.Arm("c", nil)
		h.Close()
		requireClosed(t, c)
		stopC()
		d, _ := h.Arm("d", nil)
		requireClosed(t, d)
	})
}

func requireClosed(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	default:
		t.Fatal("not woken")
	}
}

func requireOpen(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
		t.Fatal("woken")
	default:
	}
}

// TestRowItem: an expired claim reads as the next Claim will write it.
func TestRowItem(t *testing.T) {
	now := time.Unix(1000, 0)
	at := func(us int64) time.Time { return time.UnixMicro(us) }
	r := Row{ID: 7, Queue: "q", State: RowClaimed, Attempts: 2, MaxAttempts: 3, Owner: "w", Due: now.Add(-time.Second),
		History: []byte(`[{"a":1,"o":null,"t":5,"r":"boom","l":false}]`), Tags: `["x"]`}
	it, err := r.Item(now, at)
	require.NoError(t, err)
	assert.Equal(t, claim.Visible, it.State)
	assert.Equal(t, []string{"x"}, it.Tags)
	require.Len(t, it.History, 2)
	assert.Equal(t, claim.Failure{Attempt: 1, At: at(5), Reason: "boom"}, it.History[0])
	assert.Equal(t, claim.Failure{Attempt: 2, Owner: "w", At: r.Due, Reason: "lease expired", Lost: true}, it.History[1])

	r.Attempts = 3
	it, err = r.Item(now, at)
	require.NoError(t, err)
	assert.Equal(t, claim.Dead, it.State)
	assert.Equal(t, r.Due, it.DeadAt)

	r.Tags = `not json`
	_, err = r.Item(now, at)
	assert.ErrorContains(t, err, "item 7")
}
