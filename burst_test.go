package lease_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// The tests in this file hold a burst of expiries mid-way: the first ending
// delivered blocks its delivery, and with it the timer's settling of the
// rest, until the test lets it go. They run on the default clock in a
// synctest bubble, so the timer fires on a goroutine of its own at the exact
// deadline.

// burstSize is several of the timer's batches.
const burstSize = 5000

// heldBurst is a service with one lease due in an hour (live) and
// burstSize leases due at one instant, a second after they were granted,
// whose burst is under way and held.
type heldBurst struct {
	s     *lease.Service
	live  lease.Lease
	burst []lease.Lease
	extra lease.Lease // granted last by the setup function, if any
	ended atomic.Int64
	gate  chan struct{}
}

// holdBurst starts the burst and returns once its first ending is held.
// extra, if not nil, grants one more lease after the burst's, due with them
// or not. Everything must run inside a synctest bubble.
func holdBurst(t *testing.T, extra func(s *lease.Service) lease.Lease, opts ...lease.Option) *heldBurst {
	t.Helper()
	opts = append([]lease.Option{lease.WithAuditCapacity(4 * burstSize)}, opts...)
	b := &heldBurst{s: lease.Must(lease.New(opts...)), gate: make(chan struct{})}
	t.Cleanup(func() { require.NoError(t, b.s.Close()) })
	b.live = grant(t, b.s, lease.Operation, time.Hour)
	for range burstSize {
		b.burst = append(b.burst, grant(t, b.s, lease.Operation, time.Second))
	}
	if extra != nil {
		b.extra = extra(b.s)
	}
	stop := b.s.OnEnd(func(lease.Lease, lease.EndReason) {
		if b.ended.Add(1) == 1 {
			<-b.gate
		}
	})
	t.Cleanup(stop)
	<-time.After(time.Second)
	synctest.Wait()
	require.EqualValues(t, 1, b.ended.Load(), "the burst is held at its first ending")
	return b
}

// release lets the burst go on and waits until every ending is delivered.
func (b *heldBurst) release(t *testing.T) {
	t.Helper()
	close(b.gate)
	synctest.Wait()
	require.EqualValues(t, burstSize, b.ended.Load())
}

// position returns how many expiries the audit trail records before the
// first decision about id with action, and how many after it.
func position(t *testing.T, s *lease.Service, id lease.ID, action lease.Action) (before, after int) {
	t.Helper()
	found := false
	for _, d := range s.Audit() {
		switch {
		case d.LeaseID == id && d.Action == action && !found:
			found = true
		case d.Action != lease.ActionExpire:
		case found:
			after++
		default:
			before++
		}
	}
	require.True(t, found, "no %v decision for lease %d", action, id)
	return before, after
}

// TestUseDuringABurstDoesNotWaitForIt: a call about a lease that is not due
// answers while a burst of others' expiries is still being settled, and the
// timer settles the burst no faster than it is delivered, so the events
// waiting for delivery stay bounded.
func TestUseDuringABurstDoesNotWaitForIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := holdBurst(t, nil, auditFunc(func(lease.Decision) {}), lease.WithObserverBuffer(burstSize/4))

		require.Zero(t, b.s.DroppedDecisions(), "a held delivery holds the burst: its decisions never pile up past the sink's buffer")
		got, err := b.s.Use(ctx, b.live.ID, lease.Operation)
		require.NoError(t, err, "the live lease answers while the burst is held")
		require.Equal(t, b.live.ID, got.ID)
		info, err := b.s.Info(ctx, b.live.ID)
		require.NoError(t, err)
		require.Equal(t, b.live.ExpiresAt, info.ExpiresAt)
		require.Zero(t, b.s.DroppedDecisions(), "nor did the calls settle it")

		b.release(t)
		before, after := position(t, b.s, b.live.ID, lease.ActionUse)
		require.Positive(t, after, "the Use was decided while expiries remained")
		require.Equal(t, burstSize, before+after)
		require.Equal(t, 1, b.s.ActiveCount())
	})
}

// TestUseOfADueLeaseDuringABurstIsStale: a call about a lease that is due
// settles everything due first, so it is never answered as active, however
// far the timer has got.
func TestUseOfADueLeaseDuringABurstIsStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := holdBurst(t, nil)
		last := b.burst[len(b.burst)-1] // the last to be settled: ties end in ID order
		_, err := b.s.Use(ctx, last.ID, lease.Operation)
		requireCode(t, err, lease.CodeStaleUse, lease.ErrStaleUse)
		_, err = b.s.Info(ctx, last.ID)
		requireCode(t, err, lease.CodeExpired, lease.ErrExpired)

		b.release(t)
		before, after := position(t, b.s, last.ID, lease.ActionUse)
		require.Equal(t, burstSize, before, "the Use settled the rest of the burst first")
		require.Zero(t, after)
	})
}

// TestUseOfAKeptAliveLeaseDueForRenewalSettlesFirst: a lease whose
// keep-alive renewal is due counts as due, so a call about it waits for
// everything due, the renewal among it.
func TestUseOfAKeptAliveLeaseDueForRenewalSettlesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kctx, cancel := context.WithCancel(ctx)
		defer cancel()
		b := holdBurst(t, func(s *lease.Service) lease.Lease {
			l := grant(t, s, lease.Operation, 3*time.Second) // renewed every second: with the burst
			_, err := s.KeepAlive(kctx, l.ID)
			require.NoError(t, err)
			return l
		})
		_, err := b.s.Use(ctx, b.extra.ID, lease.Operation)
		require.NoError(t, err)

		b.release(t)
		before, after := position(t, b.s, b.extra.ID, lease.ActionUse)
		require.Equal(t, burstSize, before, "the Use waited for the renewal and everything due before it")
		require.Zero(t, after)
	})
}

// TestExpiredKeysAreNotShared edits the Keys that the expiry hook and the
// first of two subscribers received: the last subscriber, which is handed
// the event's own Keys, still sees them as deleted.
func TestExpiredKeysAreNotShared(t *testing.T) {
	var hooked, first, second []string
	s, clk := newService(t)
	onExpired(s, func(l lease.Lease) {
		hooked = l.Keys
		l.Keys[0] = "edited by the hook"
	})
	s.OnEnd(func(l lease.Lease, _ lease.EndReason) {
		first = l.Keys
		l.Keys[1] = "edited by first"
	})
	s.OnEnd(func(l lease.Lease, _ lease.EndReason) { second = l.Keys })
	l := grant(t, s, lease.Operation, time.Second)
	require.NoError(t, s.Put(ctx, "a", nil, l.ID))
	require.NoError(t, s.Put(ctx, "b", nil, l.ID))

	clk.Advance(time.Second)
	require.Equal(t, []string{"edited by the hook", "b"}, hooked)
	require.Equal(t, []string{"a", "edited by first"}, first)
	require.Equal(t, []string{"a", "b"}, second)
}

// TestPanicOutOfABurstLeavesTheRestToTheTimer: when a panic escapes the
// delivery of a burst's first batch (a panic handler that panics), the
// leases still due are not stranded: the timer is armed for them at once.
func TestPanicOutOfABurstLeavesTheRestToTheTimer(t *testing.T) {
	handled := 0
	s, clk := newService(t, lease.WithPanicHandler(func(*lease.PanicError) {
		if handled++; handled == 1 {
			panic("the panic handler failed")
		}
	}))
	live := grant(t, s, lease.Operation, time.Hour)
	for range burstSize {
		grant(t, s, lease.Operation, time.Second)
	}
	s.OnEnd(func(lease.Lease, lease.EndReason) { panic("subscriber failed") })

	require.PanicsWithValue(t, "the panic handler failed", func() { clk.Advance(time.Second) })
	next, ok := clk.NextDeadline()
	require.True(t, ok, "a timer is armed for the rest")
	require.Equal(t, t0.Add(time.Second), next, "at once")

	clk.Advance(0)
	next, ok = clk.NextDeadline()
	require.True(t, ok)
	require.Equal(t, live.ExpiresAt, next, "the timer settled the rest of the burst")
	require.Equal(t, 1, s.ActiveCount())
}

// TestMemoryIsGivenBackAfterABurst expires 2^18 leases at once on the timer:
// the expiry heap keeps its array while the burst is settled and gives it
// back when the burst is done, so what the service retains afterwards is
// far below the 6 MiB the heap's array alone took.
func TestMemoryIsGivenBackAfterABurst(t *testing.T) {
	const n = 1 << 18
	base := heapBytes()
	clk := leasetest.NewFakeClock(t0)
	s := lease.Must(lease.New(lease.WithClock(clk), lease.WithAuditCapacity(16), lease.WithEndedCapacity(16)))
	defer s.Close()
	grant(t, s, lease.Operation, time.Hour)
	for range n {
		grant(t, s, lease.Operation, time.Second)
	}
	clk.Advance(time.Second)
	require.Equal(t, 1, s.ActiveCount())
	retained := heapBytes() - base
	runtime.KeepAlive(s)
	t.Logf("retained after the burst: %d bytes", retained)
	require.Less(t, retained, int64(1<<20))
}
