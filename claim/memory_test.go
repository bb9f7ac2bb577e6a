package claim_test

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

// The Broker's memory follows the items it holds, not the most it ever
// held. Each scenario builds a live set twice: once after a churn of many
// more items, and once fresh. The heap the Broker retains (the live heap
// with it, less the live heap once it is closed and dropped, so that the
// service's own memory does not count) is compared per live object.

const (
	churn    = 1 << 15 // items (or queues) that come and go
	liveSet  = 1000    // objects left at the end
	maxRatio = 1.5     // churned over fresh, per live object
)

var memPayload = []byte("0123456789abcdef")

type memScenario struct {
	name string
	live int // live objects the build leaves
	// build leaves the live set in b; with churn it first puts churn
	// objects through the Broker.
	build func(t testing.TB, b *claim.Broker, clk *leasetest.FakeClock, churn bool)
}

var memScenarios = []memScenario{
	{"dead letters among completed items", deadLetters, buildDeadLetters},
	{"queues used and emptied", liveSet, buildQueues},
	{"heaps and FIFOs after a peak", 3 * liveSet, buildPeak},
}

// deadLetters is how many dead letters buildDeadLetters leaves.
const deadLetters = 256

// buildDeadLetters leaves deadLetters dead letters; churned, each one the
// last of churn/deadLetters items, the others completed.
func buildDeadLetters(t testing.TB, b *claim.Broker, _ *leasetest.FakeClock, churn bool) {
	every := 1
	if churn {
		every = churnCount() / deadLetters
	}
	for range deadLetters {
		for i := range every {
			enqueueMem(t, b, q, claim.MaxAttempts(1))
			c := claimOne(t, b, q, "w")
			if i < every-1 {
				require.NoError(t, b.Complete(ctx, c))
				continue
			}
			_, err := b.Fail(ctx, c, "x", time.Second, time.Second)
			require.NoError(t, err)
		}
	}
}

// buildQueues leaves liveSet queues of one visible item each; churned,
// after as many other queues each received an item that was completed.
func buildQueues(t testing.TB, b *claim.Broker, _ *leasetest.FakeClock, churn bool) {
	if churn {
		for i := range churnCount() {
			name := "gone-" + strconv.Itoa(i)
			enqueueMem(t, b, name)
			require.NoError(t, b.Complete(ctx, claimOne(t, b, name, "w")))
		}
	}
	for i := range liveSet {
		enqueueMem(t, b, "live-"+strconv.Itoa(i))
	}
}

// buildPeak leaves liveSet visible, liveSet delayed and liveSet claimed
// items in one queue; churned, after churn items were visible at once,
// then claimed at once, then delayed at once.
func buildPeak(t testing.TB, b *claim.Broker, clk *leasetest.FakeClock, churn bool) {
	n := liveSet
	if churn {
		n = churnCount()
	}
	var claims []claim.Claim
	for range n {
		enqueueMem(t, b, q)
	}
	for len(claims) < n {
		cs, err := b.Claim(ctx, q, "w", 1000, time.Hour)
		require.NoError(t, err)
		claims = append(claims, cs...)
	}
	for _, c := range claims[:n-liveSet] {
		require.NoError(t, b.Complete(ctx, c))
	}
	if churn {
		for range n {
			enqueueMem(t, b, q, claim.Delay(time.Minute))
		}
		clk.Advance(time.Minute)
		for c := countsOf(t, b, q); c.Visible > 0; c = countsOf(t, b, q) {
			cs, err := b.Claim(ctx, q, "w", 1000, time.Hour)
			require.NoError(t, err)
			for _, c := range cs {
				require.NoError(t, b.Complete(ctx, c))
			}
		}
	}
	for range liveSet {
		enqueueMem(t, b, q)
		enqueueMem(t, b, q, claim.Delay(time.Minute))
	}
	require.Equal(t, counts(liveSet, liveSet, liveSet, 0), countsOf(t, b, q))
}

func churnCount() int {
	if testing.Short() {
		return churn / 8
	}
	return churn
}

func enqueueMem(t testing.TB, b *claim.Broker, queue string, opts ...claim.EnqueueOption) {
	if _, err := b.Enqueue(ctx, queue, memPayload, opts...); err != nil {
		require.NoError(t, err)
	}
}

// retainedPerLive builds the scenario on a new Broker and returns the heap
// bytes the Broker retains per live object.
func retainedPerLive(t testing.TB, s memScenario, churn bool) float64 {
	clk := leasetest.NewFakeClock(t0)
	// The service keeps no audit trail and few ended leases, so that its
	// own memory is small; it is not counted anyway.
	svc := lease.Must(lease.New(lease.WithClock(clk), lease.WithAuditCapacity(0), lease.WithEndedCapacity(1)))
	defer svc.Close()
	b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	s.build(t, b, clk, churn)
	with := liveHeap()
	require.NoError(t, b.Close())
	runtime.KeepAlive(b)
	without := liveHeap()
	require.Greater(t, with, without)
	return float64(with-without) / float64(s.live)
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func TestMemoryFollowsTheLiveSet(t *testing.T) {
	for _, s := range memScenarios {
		t.Run(s.name, func(t *testing.T) {
			fresh := retainedPerLive(t, s, false)
			churned := retainedPerLive(t, s, true)
			t.Logf("%s: %.0f B per live object after a churn of %d, %.0f B fresh (%.2fx)",
				s.name, churned, churnCount(), fresh, churned/fresh)
			assert.LessOrEqual(t, churned, maxRatio*fresh, "churned %.0f B, fresh %.0f B per live object", churned, fresh)
		})
	}
}

// BenchmarkRetainedMemory reports the figures of TestMemoryFollowsTheLiveSet:
// bytes retained per live object, after churn and fresh.
func BenchmarkRetainedMemory(b *testing.B) {
	for _, s := range memScenarios {
		b.Run(s.name, func(b *testing.B) {
			var fresh, churned float64
			for b.Loop() {
				fresh = retainedPerLive(b, s, false)
				churned = retainedPerLive(b, s, true)
			}
			b.ReportMetric(churned, "B/live-churned")
			b.ReportMetric(fresh, "B/live-fresh")
		})
	}
}

// TestLookupAcrossSweeps: items completed as soon as they are enqueued,
// with a dead letter now and then, over many spans of IDs: every lookup
// answers as if the Broker kept a plain map.
func TestLookupAcrossSweeps(t *testing.T) {
	b, _, _ := newBroker(t, claim.WithMaxAttempts(1))
	dead := map[claim.ItemID]bool{}
	var last claim.ItemID
	for i := range 5000 {
		it := enqueue(t, b, q, "p")
		last = it.ID
		c := claimOne(t, b, q, "w")
		if i%97 == 0 {
			_, err := b.Fail(ctx, c, "x", time.Second, time.Second)
			require.NoError(t, err)
			dead[it.ID] = true
			continue
		}
		require.NoError(t, b.Complete(ctx, c))
	}
	for id := claim.ItemID(1); id <= last+1; id++ { // 0 is no ID: bad input
		got, ok := lookup(t, b, id)
		require.Equal(t, dead[id], ok, "item %d", id)
		if ok {
			require.Equal(t, claim.Dead, got.State)
		}
	}
	assert.Len(t, listDead(t, b, q), len(dead))
}

// TestQueueDrainedAndRefilledAcrossSweeps: a queue that drains after every
// item, across the periodic sweeps that free drained queues, always hands
// out the item just enqueued.
func TestQueueDrainedAndRefilledAcrossSweeps(t *testing.T) {
	b, _, _ := newBroker(t)
	for i := range 2000 {
		it := enqueue(t, b, q, "p")
		cs, err := b.Claim(ctx, q, "w", 1, ttl)
		require.NoError(t, err)
		require.Len(t, cs, 1, "item %d (round %d)", it.ID, i)
		require.NoError(t, b.Complete(ctx, cs[0]))
		require.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
	}
}
