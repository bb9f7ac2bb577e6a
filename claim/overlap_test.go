package claim_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// gatedStore is Memory whose claims each wait for a value on gate (or for
// their context) before claiming, and are recorded: the limit asked for,
// how many were under way at once at most, and how many items each got.
type gatedStore struct {
	*claim.Memory
	gate chan struct{}
	// hook, if set, sees the items of each claim let through the gate
	// (the k-th, from 1) before the claim returns them.
	hook func(k int, cs []claim.Claim)

	mu      sync.Mutex
	limits  []int
	sizes   []int
	cur     int // claims under way
	maxCur  int
	waiting int // claims waiting at the gate
	passed  int // claims let through the gate
}

func (s *gatedStore) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	s.mu.Lock()
	s.cur++
	s.waiting++
	s.maxCur = max(s.maxCur, s.cur)
	s.limits = append(s.limits, req.Limit)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cur--
		s.mu.Unlock()
	}()
	select {
	case <-s.gate:
	case <-ctx.Done():
		s.mu.Lock()
		s.waiting--
		s.mu.Unlock()
		return nil, ctx.Err()
	}
	s.mu.Lock()
	s.waiting--
	s.passed++
	k := s.passed
	s.mu.Unlock()
	cs, err := s.Memory.Claim(ctx, req)
	s.mu.Lock()
	s.sizes = append(s.sizes, len(cs))
	s.mu.Unlock()
	if s.hook != nil {
		s.hook(k, cs)
	}
	return cs, err
}

// state returns the limits asked for so far, the most claims under way at
// once, and how many wait at the gate now.
func (s *gatedStore) state() (limits []int, maxCur, waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.limits...), s.maxCur, s.waiting
}

// The queue and the Worker of the gated tests.
const gatedItems, gatedWorkers, gatedPrefetch = 40, 4, 4

// newGatedBroker returns a Broker on a gatedStore on the system clock (the
// bubble's inside synctest), both closed when the test ends, with gatedItems
// items enqueued on q.
func newGatedBroker(t *testing.T) (*claim.Broker, *gatedStore) {
	t.Helper()
	svc := lease.Must(lease.New())
	store := &gatedStore{Memory: lease.Must(claim.NewMemory(svc)), gate: make(chan struct{})}
	b := lease.Must(claim.New(store))
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, svc.Close())
	})
	for range gatedItems {
		enqueue(t, b, q, "x")
	}
	return b, store
}

// gatedWorker is the Worker of the gated tests: gatedWorkers handlers
// running h, with gatedPrefetch room.
func gatedWorker(h claim.Handler) claim.Worker {
	return claim.Worker{Queue: q, Concurrency: gatedWorkers, Prefetch: gatedPrefetch, Handler: h}
}

// countDone is a handler that counts each item done on wg.
func countDone(wg *sync.WaitGroup) claim.Handler {
	return func(context.Context, claim.Claim) error { wg.Done(); return nil }
}

// TestWorkOverlapsClaimsWithPrefetchRoom: with Prefetch room for a second
// claim, once a claim came back full (the queue holds more), Work claims a
// handler's worth of items per claim and sends the next while the last is
// under way, never more than two at once, and never claims more than
// Concurrency + Prefetch items held.
func TestWorkOverlapsClaimsWithPrefetchRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, store := newGatedBroker(t)
		var handled sync.WaitGroup
		handled.Add(gatedItems)
		stop := startWork(t, b, gatedWorker(countDone(&handled)))
		synctest.Wait()
		limits, _, waiting := store.state()
		assert.Equal(t, []int{gatedWorkers + gatedPrefetch}, limits, "the first claim fills every slot")
		assert.Equal(t, 1, waiting)

		store.gate <- struct{}{}
		synctest.Wait()
		limits, _, waiting = store.state()
		require.Len(t, limits, 3, "it came back full: the second claim sent while the first is under way")
		assert.Equal(t, 2, waiting)
		assert.LessOrEqual(t, limits[1]+limits[2], gatedWorkers+gatedPrefetch, "no more asked for than there are slots")

		for {
			_, _, waiting = store.state()
			if waiting == 0 {
				break
			}
			store.gate <- struct{}{}
			synctest.Wait()
		}
		handled.Wait()
		require.NoError(t, stop())
		limits, maxCur, _ := store.state()
		assert.Equal(t, 2, maxCur, "two claims under way at most")
		for _, l := range limits[1:] {
			assert.LessOrEqual(t, l, gatedWorkers, "a handler's worth per claim once the queue showed it holds more")
		}
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
	})
}

// TestWorkWithoutPrefetchHasOneClaimUnderWay: without Prefetch room every
// idle slot goes into the one claim under way, so there is never a second.
func TestWorkWithoutPrefetchHasOneClaimUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, store := newGatedBroker(t)
		var handled sync.WaitGroup
		handled.Add(gatedItems)
		w := gatedWorker(countDone(&handled))
		w.Prefetch = 0
		stop := startWork(t, b, w)
		for {
			synctest.Wait()
			if _, _, waiting := store.state(); waiting == 0 {
				break
			}
			store.gate <- struct{}{}
		}
		handled.Wait()
		require.NoError(t, stop())
		_, maxCur, _ := store.state()
		assert.Equal(t, 1, maxCur)
	})
}

// TestWorkStopsWithTwoClaimsUnderWay: Work's context done while two claims
// are under way: Work returns once both have, nil, and their items are
// left to be claimed again.
func TestWorkStopsWithTwoClaimsUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, store := newGatedBroker(t)
		var handled sync.WaitGroup
		handled.Add(gatedWorkers + gatedPrefetch)
		stop := startWork(t, b, gatedWorker(countDone(&handled)))
		synctest.Wait()
		store.gate <- struct{}{}
		synctest.Wait()
		_, _, waiting := store.state()
		require.Equal(t, 2, waiting)
		handled.Wait()
		require.NoError(t, stop())
		_, maxCur, waiting := store.state()
		assert.Equal(t, 0, waiting, "both claims ended before Work returned")
		assert.Equal(t, 2, maxCur)
		assert.Equal(t, counts(gatedItems-gatedWorkers-gatedPrefetch, 0, 0, 0), countsOf(t, b, q))
	})
}

// TestWorkClosesWithTwoClaimsUnderWay: the Broker closing while two claims
// are under way ends Work with lease.ErrClosed once both have returned.
func TestWorkClosesWithTwoClaimsUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, store := newGatedBroker(t)
		done := make(chan error, 1)
		go func() {
			done <- b.Work(ctx, gatedWorker(func(context.Context, claim.Claim) error { return nil }))
		}()
		synctest.Wait()
		store.gate <- struct{}{}
		synctest.Wait()
		_, _, waiting := store.state()
		require.Equal(t, 2, waiting)
		closed := make(chan error, 1)
		go func() { closed <- b.Close() }()
		synctest.Wait()
		// The claims under way run on Work's context, which Close does not
		// end: they come back once let through, into a closed store.
		store.gate <- struct{}{}
		store.gate <- struct{}{}
		requireCode(t, <-done, lease.CodeClosed, lease.ErrClosed)
		require.NoError(t, <-closed)
	})
}

// TestWorkKeepsALossForTheClaimThatMadeIt: an item cancelled after its
// claim took it but before that claim returned to Work is never handed to
// a handler, even when the other claim under way returns in between.
func TestWorkKeepsALossForTheClaimThatMadeIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, store := newGatedBroker(t)
		hold := make(chan struct{})
		var cancelled claim.ItemID
		store.hook = func(k int, cs []claim.Claim) {
			if k != 2 || len(cs) == 0 {
				return
			}
			cancelled = cs[0].Item
			assert.NoError(t, b.Cancel(ctx, q, cancelled))
			<-hold
		}
		var mu sync.Mutex
		seen := map[claim.ItemID]bool{}
		stop := startWork(t, b, gatedWorker(func(_ context.Context, c claim.Claim) error {
			mu.Lock()
			seen[c.Item] = true
			mu.Unlock()
			return nil
		}))
		synctest.Wait()
		store.gate <- struct{}{} // the first claim, of every slot
		synctest.Wait()
		_, _, waiting := store.state()
		require.Equal(t, 2, waiting)
		store.gate <- struct{}{} // the second: it takes items, one is cancelled, and it waits
		synctest.Wait()
		store.gate <- struct{}{} // the third returns first
		synctest.Wait()
		close(hold)
		synctest.Wait()
		require.NotZero(t, cancelled)
		require.NoError(t, stop())
		mu.Lock()
		defer mu.Unlock()
		assert.False(t, seen[cancelled], "the cancelled item was handed to a handler")
		assert.NotEmpty(t, seen)
	})
}
