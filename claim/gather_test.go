package claim_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

// roundTripStore is Memory whose claims take trip on its fake clock, as a
// claim across a network does, and are recorded: the limit asked for and
// the number of items each got.
type roundTripStore struct {
	*claim.Memory
	clock *leasetest.FakeClock
	trip  time.Duration

	mu     sync.Mutex
	limits []int
	sizes  []int
}

func (s *roundTripStore) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	cs, err := s.Memory.Claim(ctx, req)
	s.clock.Advance(s.trip)
	s.mu.Lock()
	s.limits = append(s.limits, req.Limit)
	s.sizes = append(s.sizes, len(cs))
	s.mu.Unlock()
	return cs, err
}

// claims returns the limits and sizes of the claims made so far.
func (s *roundTripStore) claims() (limits, sizes []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.limits...), append([]int(nil), s.sizes...)
}

// newRoundTripBroker returns a Broker on a roundTripStore whose claims take
// a millisecond of its fake clock, both closed when the test ends.
func newRoundTripBroker(t *testing.T) (*claim.Broker, *roundTripStore, *leasetest.FakeClock) {
	t.Helper()
	clk := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(clk)))
	store := &roundTripStore{Memory: lease.Must(claim.NewMemory(svc)), clock: clk, trip: time.Millisecond}
	b := lease.Must(claim.New(store))
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, svc.Close())
	})
	return b, store, clk
}

// TestWorkClaimsFullBatchesWhenHandlersFinishInABurst: 100 handlers that
// return at once free their slots in a burst after each claim lands. Work
// waits for the burst (a claim's round trip at most) before claiming again,
// so 1,000 items take 10 claims of 100, not a claim on the first freed slot
// and another for the rest.
func TestWorkClaimsFullBatchesWhenHandlersFinishInABurst(t *testing.T) {
	b, store, _ := newRoundTripBroker(t)
	const n, workers = 1000, 100
	items := make([]claim.NewItem, n)
	for i := range items {
		items[i] = claim.NewItem{Queue: q, Payload: []byte(strconv.Itoa(i))}
	}
	_, err := b.EnqueueMany(ctx, items)
	require.NoError(t, err)
	done := make(chan struct{}, n)
	stop := startWork(t, b, claim.Worker{Queue: q, Concurrency: workers, Handler: func(context.Context, claim.Claim) error {
		done <- struct{}{}
		return nil
	}})
	for range n {
		<-done
	}
	require.NoError(t, stop())
	assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
	_, sizes := store.claims()
	var got []int
	for _, s := range sizes {
		if s > 0 {
			got = append(got, s)
		}
	}
	want := make([]int, n/workers)
	for i := range want {
		want[i] = workers
	}
	assert.Equal(t, want, got, "every claim fills every handler")
}

// gatherHandler is the handler of the gather tests: an item whose payload
// is "slow" runs until release is closed or its context is done; the others
// return at once.
func gatherHandler(release <-chan struct{}) claim.Handler {
	return func(ctx context.Context, c claim.Claim) error {
		if string(c.Payload) == "slow" {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
}

// enqueueGatherItems enqueues a slow item and five that are not, in that
// order.
func enqueueGatherItems(t *testing.T, b *claim.Broker) {
	t.Helper()
	_, err := b.EnqueueMany(ctx, []claim.NewItem{{Queue: q, Payload: []byte("slow")},
		{Queue: q}, {Queue: q}, {Queue: q}, {Queue: q}, {Queue: q}})
	require.NoError(t, err)
}

// startGathering runs, in the calling synctest bubble, 3 gatherHandlers on
// a newRoundTripBroker's queue of enqueueGatherItems, and returns once
// they are all blocked: the first claim took the slow item and two others,
// which completed, so two slots are free and the fetcher waits for the
// third. Closing release lets the slow item finish; stop stops Work.
func startGathering(t *testing.T) (b *claim.Broker, store *roundTripStore, clk *leasetest.FakeClock, release chan struct{}, stop func() error) {
	t.Helper()
	b, store, clk = newRoundTripBroker(t)
	enqueueGatherItems(t, b)
	release = make(chan struct{})
	stop = startWork(t, b, claim.Worker{Queue: q, Concurrency: 3, Handler: gatherHandler(release)})
	synctest.Wait()
	return b, store, clk, release, stop
}

// TestWorkWaitsForMoreSlotsNoLongerThanTheLastClaimTook: after a full
// claim, a claim for fewer slots than a batch waits for more to free, but
// no longer than the full claim's round trip; a claim that came back short
// or empty makes the next one wait for nothing, so a lone item is picked
// up at once.
func TestWorkWaitsForMoreSlotsNoLongerThanTheLastClaimTook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, store, clk, release, stop := startGathering(t)
		limits, _ := store.claims()
		assert.Equal(t, []int{3}, limits, "two slots free, waiting for the third for up to a round trip")

		clk.Advance(time.Millisecond)
		synctest.Wait()
		limits, sizes := store.claims()
		assert.Equal(t, []int{3, 2}, limits, "a round trip later, a claim for the two slots free")
		assert.Equal(t, []int{3, 2}, sizes)

		close(release)
		synctest.Wait()
		limits, sizes = store.claims()
		assert.Equal(t, []int{3, 2, 3, 2}, limits, "the third slot freed: a claim of a batch, short, then one that finds nothing")
		assert.Equal(t, []int{3, 2, 1, 0}, sizes)
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))

		enqueue(t, b, q, "lone")
		synctest.Wait()
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q), "picked up and completed without the clock moving")
		require.NoError(t, stop())
	})
}

// TestWorkStopsWhileWaitingForMoreSlots: Work's context done, or the Broker
// closing, ends the wait for more slots at once, and nothing more is
// claimed.
func TestWorkStopsWhileWaitingForMoreSlots(t *testing.T) {
	t.Run("ctx", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b, store, _, release, stop := startGathering(t)
			stopped := make(chan error, 1)
			go func() { stopped <- stop() }()
			synctest.Wait()
			close(release)
			require.NoError(t, <-stopped)
			limits, _ := store.claims()
			assert.Equal(t, []int{3}, limits)
			assert.Equal(t, counts(3, 0, 0, 0), countsOf(t, b, q), "the three items not claimed are left")
		})
	})
	t.Run("close", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b, store, _ := newRoundTripBroker(t)
			enqueueGatherItems(t, b)
			done := make(chan error, 1)
			go func() {
				done <- b.Work(ctx, claim.Worker{Queue: q, Concurrency: 3, Handler: gatherHandler(make(chan struct{}))})
			}()
			synctest.Wait()
			require.NoError(t, b.Close())
			requireCode(t, <-done, lease.CodeClosed, lease.ErrClosed)
			limits, _ := store.claims()
			assert.Equal(t, []int{3}, limits)
		})
	})
}
