package lease_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// The tests in this file run the service on its default clock, the time
// package, inside a synctest bubble: time there is virtual and moves only when
// every goroutine of the bubble is blocked, so deadlines are exact and
// nothing sleeps. The bubble also fails a test that leaves a goroutine behind.

// expiryLog is an expiry subscriber (onExpired) recording each expiry and when it ran.
type expiryLog struct {
	mu   sync.Mutex
	got  []lease.Lease
	when []time.Time
}

func (e *expiryLog) hook(l lease.Lease) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, l)
	e.when = append(e.when, time.Now())
}

func (e *expiryLog) snapshot() ([]lease.Lease, []time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]lease.Lease(nil), e.got...), append([]time.Time(nil), e.when...)
}

func TestRealClockExpiresOnItsOwnTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 10 * time.Second
		log := &expiryLog{}
		s := lease.Must(lease.New())
		onExpired(s, log.hook)
		defer s.Close()
		l, err := s.Grant(ctx, "h", lease.Operation, ttl)
		require.NoError(t, err)
		require.NoError(t, s.Put(ctx, "k", []byte("v"), l.ID))

		<-time.After(ttl - time.Nanosecond)
		synctest.Wait()
		got, _ := log.snapshot()
		require.Empty(t, got, "no expiry a nanosecond before the deadline")
		_, err = s.Info(ctx, l.ID)
		require.NoError(t, err, "active just before the deadline")
		_, _, ok := mustGet(t, s, "k")
		require.True(t, ok)

		<-time.After(time.Nanosecond)
		synctest.Wait()
		// Checked before any call into the service: only the timer can have
		// run the hook.
		got, when := log.snapshot()
		require.Len(t, got, 1, "the timer expired the lease with no call to the service")
		require.Equal(t, l.ID, got[0].ID)
		require.Equal(t, []string{"k"}, got[0].Keys)
		require.True(t, when[0].Equal(l.ExpiresAt), "the timer fired at the deadline: %v, want %v", when[0], l.ExpiresAt)

		_, err = s.Info(ctx, l.ID)
		requireCode(t, err, lease.CodeExpired, lease.ErrExpired)
		_, _, ok = mustGet(t, s, "k")
		require.False(t, ok)
		require.Zero(t, s.ActiveCount())
	})
}

func TestRealClockKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		log := &expiryLog{}
		var renewals atomic.Int64
		s := lease.Must(lease.New(auditFunc(func(d lease.Decision) {
			if d.Action == lease.ActionRenew && d.Allowed {
				renewals.Add(1)
			}
		})))
		onExpired(s, log.hook)
		defer s.Close()
		l, err := s.Grant(ctx, "h", lease.Operation, ttl)
		require.NoError(t, err)
		start := time.Now()
		parent, cancel := context.WithCancel(ctx)
		defer cancel()
		alive, err := s.KeepAlive(parent, l.ID)
		require.NoError(t, err)

		// Ten TTLs and a bit, so the last renewal (at 30s) is not tied
		// with the wake-up.
		<-time.After(10*ttl + ttl/6)
		synctest.Wait()
		got, _ := log.snapshot()
		require.Empty(t, got)
		require.NoError(t, alive.Err())
		info, err := s.Info(ctx, l.ID)
		require.NoError(t, err, "kept alive across ten TTLs")
		lastRenewal := start.Add(10 * ttl)
		require.True(t, info.RenewedAt.Equal(lastRenewal), "renewed at %v, want %v", info.RenewedAt, lastRenewal)
		require.Equal(t, int64(31), renewals.Load(), "KeepAlive's own renewal and one every TTL/3")

		cancel()
		synctest.Wait()
		require.ErrorIs(t, context.Cause(alive), context.Canceled)

		// Left to expire one TTL after the last renewal, not before.
		<-time.After(time.Until(lastRenewal.Add(ttl)) - time.Nanosecond)
		synctest.Wait()
		got, _ = log.snapshot()
		require.Empty(t, got)
		require.Equal(t, int64(31), renewals.Load(), "no renewal after the parent was cancelled")
		<-time.After(time.Nanosecond)
		synctest.Wait()
		got, when := log.snapshot()
		require.Len(t, got, 1)
		require.True(t, got[0].ExpiresAt.Equal(lastRenewal.Add(ttl)))
		require.True(t, when[0].Equal(lastRenewal.Add(ttl)))
		_, err = s.Info(ctx, l.ID)
		requireCode(t, err, lease.CodeExpired, lease.ErrExpired)
	})
}

// countingClock wraps the system clock and counts the timer callbacks that
// actually run, so a test can tell a stopped timer from one that fired.
type countingClock struct {
	lease.Clock
	fired atomic.Int64
}

func (c *countingClock) AfterFunc(d time.Duration, f func()) lease.Timer {
	return c.Clock.AfterFunc(d, func() {
		c.fired.Add(1)
		f()
	})
}

func TestRealClockCloseStopsTimer(t *testing.T) {
	t.Run("default clock", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			log := &expiryLog{}
			s := lease.Must(lease.New())
			onExpired(s, log.hook)
			l, err := s.Grant(ctx, "h", lease.Operation, time.Minute)
			require.NoError(t, err)
			alive, err := s.KeepAlive(ctx, l.ID)
			require.NoError(t, err)
			require.NoError(t, s.Close())
			require.ErrorIs(t, context.Cause(alive), lease.ErrClosed)

			<-time.After(time.Hour)
			synctest.Wait()
			got, _ := log.snapshot()
			require.Empty(t, got, "no lease expires after Close")
			// Returning leaves the bubble, which fails if a goroutine of the
			// service is still running or blocked.
		})
	})
	t.Run("timer stopped", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			clk := &countingClock{Clock: lease.SystemClock()}
			s := lease.Must(lease.New(lease.WithClock(clk)))
			_, err := s.Grant(ctx, "h", lease.Operation, time.Minute)
			require.NoError(t, err)
			require.NoError(t, s.Close())
			<-time.After(time.Hour)
			synctest.Wait()
			assert.Zero(t, clk.fired.Load(), "Close stopped the timer before its deadline")
		})
	})
	t.Run("timer runs without Close", func(t *testing.T) {
		// The counterpart of the case above, so that one can fail.
		synctest.Test(t, func(t *testing.T) {
			clk := &countingClock{Clock: lease.SystemClock()}
			s := lease.Must(lease.New(lease.WithClock(clk)))
			defer s.Close()
			_, err := s.Grant(ctx, "h", lease.Operation, time.Minute)
			require.NoError(t, err)
			<-time.After(time.Hour)
			synctest.Wait()
			assert.Equal(t, int64(1), clk.fired.Load())
		})
	})
}
