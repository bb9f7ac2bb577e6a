package renewal_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/renewal"
	"github.com/leasehold/lease/leasetest"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	testDuration = 30 * time.Second
	testMargin   = 3 * time.Second
	testRetry    = 3 * time.Second
)

var (
	errExpired = errors.New("expired")
	errDown    = errors.New("down")
	errGone    = errors.New("gone")
)

// script is a Renew whose outcome a test sets, and which records when it
// was called, as offsets from epoch on its clock.
type script struct {
	clock lease.Clock
	mu    sync.Mutex
	err   error
	calls []time.Duration
}

func (s *script) renew(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, s.clock.Now().Sub(epoch))
	return s.err
}

func (s *script) set(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

func (s *script) called() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.calls...)
}

func config(clock lease.Clock, renew func(context.Context) error) renewal.Config {
	return renewal.Config{Clock: clock, Duration: testDuration, Margin: testMargin, Retry: testRetry,
		Renew: renew, Expired: errExpired}
}

// start runs a Loop on a fake clock at epoch, stopped with the test.
func start(t *testing.T) (*renewal.Loop, *leasetest.FakeClock, *script) {
	t.Helper()
	clock := leasetest.NewFakeClock(epoch)
	s := &script{clock: clock}
	l := renewal.Start(context.Background(), config(clock, s.renew), clock.Now())
	t.Cleanup(func() { l.Stop() })
	return l, clock, s
}

func secs(n ...int) []time.Duration {
	out := make([]time.Duration, len(n))
	for i, v := range n {
		out[i] = time.Duration(v) * time.Second
	}
	return out
}

func TestRenewsEveryThirdFromTheSentInstant(t *testing.T) {
	l, clock, s := start(t)
	clock.Advance(10*time.Second - 1)
	assert.Empty(t, s.called(), "nothing before the first third")
	clock.Advance(1)
	assert.Equal(t, secs(10), s.called())
	clock.Advance(5 * time.Minute)
	assert.Len(t, s.called(), 31, "every 10 s for 5 min")
	require.NoError(t, l.Context().Err())
	assert.NoError(t, l.Err())
	assert.NoError(t, l.Stop())
	assert.Zero(t, clock.Pending(), "no timer left behind")
	assert.ErrorIs(t, l.Context().Err(), context.Canceled)
	assert.Same(t, context.Canceled, context.Cause(l.Context()))
}

// Failed renewals are retried while a retry can land before the deadline,
// which is the margin before the last confirmed expiry: 27 s after the
// start, to the nanosecond.
func TestRetriesThenLosesAtTheSafetyDeadline(t *testing.T) {
	l, clock, s := start(t)
	s.set(errDown)
	clock.Advance(27*time.Second - 1)
	assert.Equal(t, secs(10, 13, 16, 19, 22, 25), s.called(), "25 + 3 would not land before 27")
	require.NoError(t, l.Context().Err())
	clock.Advance(1)
	assert.Same(t, errExpired, context.Cause(l.Context()))
	assert.Same(t, errExpired, l.Err())
	clock.Advance(time.Hour)
	assert.Len(t, s.called(), 6, "nothing is renewed once lost")
	assert.Zero(t, clock.Pending())
	assert.Same(t, errExpired, l.Stop())
}

func TestRetryThatSucceedsMovesTheDeadline(t *testing.T) {
	l, clock, s := start(t)
	s.set(errDown)
	clock.Advance(16 * time.Second) // fails at 10, 13, 16
	s.set(nil)
	clock.Advance(3 * time.Second)    // confirmed by the call sent at 19
	clock.Advance(27*time.Second - 1) // up to just before the new deadline, 46 s
	assert.Equal(t, secs(10, 13, 16, 19, 29, 39), s.called(), "renewals count from the retry that succeeded")
	assert.NoError(t, l.Err())
}

// A renewal that says the thing is gone ends the hold at once, with the
// cause it gave.
func TestLostEndsAtOnce(t *testing.T) {
	l, clock, s := start(t)
	s.set(renewal.Lost(errGone))
	clock.Advance(10 * time.Second)
	assert.Same(t, errGone, context.Cause(l.Context()))
	assert.Same(t, errGone, l.Err())
	clock.Advance(time.Hour)
	assert.Equal(t, secs(10), s.called())
	assert.Zero(t, clock.Pending())
	assert.Same(t, errGone, l.Stop())
	assert.Panics(t, func() { _ = renewal.Lost(nil) })
	assert.ErrorIs(t, renewal.Lost(errGone), errGone, "Lost wraps its cause")
}

// A hold confirmed by a call sent so long ago that its deadline has passed
// is lost at once, and arms nothing.
func TestLostAtStart(t *testing.T) {
	clock := leasetest.NewFakeClock(epoch)
	s := &script{clock: clock}
	l := renewal.Start(context.Background(), config(clock, s.renew), epoch.Add(-27*time.Second))
	assert.Same(t, errExpired, l.Err())
	assert.Same(t, errExpired, context.Cause(l.Context()))
	assert.Zero(t, clock.Pending())
	assert.Same(t, errExpired, l.Stop())
}

func TestStopEndsEverything(t *testing.T) {
	l, clock, s := start(t)
	clock.Advance(15 * time.Second)
	assert.NoError(t, l.Stop())
	assert.NoError(t, l.Stop(), "idempotent")
	clock.Advance(time.Hour)
	assert.Equal(t, secs(10), s.called(), "nothing runs after Stop")
	assert.Zero(t, clock.Pending())
}

// The context given to Start is the parent of the hold's, and its
// cancellation does not stop the renewals: the holder decides.
func TestParentContext(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	clock := leasetest.NewFakeClock(epoch)
	var seen any
	l := renewal.Start(parent, config(clock, func(ctx context.Context) error {
		seen = ctx.Value(key{})
		return ctx.Err()
	}), epoch)
	defer l.Stop()
	cancel()
	assert.ErrorIs(t, l.Context().Err(), context.Canceled)
	clock.Advance(10 * time.Second)
	assert.Equal(t, "v", seen, "renewals carry the parent's values")
	assert.NoError(t, l.Err(), "and not its cancellation")
}

// standingClock is a never-backwards view of a FakeClock whose timers do
// not re-check: Now reads the FakeClock's time, or the latest time it has
// read if that is later (a step back reads as time standing still), while
// AfterFunc arms the FakeClock's timers by duration from the FakeClock's own
// time. After a step back, a timer armed for d fires before Now has moved
// by d.
type standingClock struct {
	*leasetest.FakeClock
	mu   sync.Mutex
	last time.Time
}

func (c *standingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.FakeClock.Now(); n.After(c.last) {
		c.last = n
	}
	return c.last
}

// A timer that fires early re-arms and does nothing else: the renewal and
// the deadline happen at their instants on the Loop's clock.
func TestEarlyTimersReArm(t *testing.T) {
	fake := leasetest.NewFakeClock(epoch)
	clock := &standingClock{FakeClock: fake}
	fake.Advance(100 * time.Second)
	require.Equal(t, epoch.Add(100*time.Second), clock.Now())
	fake.Rewind(50 * time.Second) // the clock reads 100 s until the fake catches up
	s := &script{clock: clock, err: errDown}
	l := renewal.Start(context.Background(), config(clock, s.renew), clock.Now())
	defer l.Stop()
	fake.Advance(50*time.Second - 1) // timers armed for 10 s fire at 60, 70, 80 and 90
	assert.Empty(t, s.called(), "no renewal before 110 s")
	fake.Advance(10*time.Second + 1)
	assert.Equal(t, secs(110), s.called(), "renewed when the Loop's clock reads 110 s")
	fake.Advance(17*time.Second - 1)
	require.NoError(t, l.Err(), "the deadline is 127 s on the Loop's clock")
	assert.Equal(t, secs(110, 113, 116, 119, 122, 125), s.called())
	fake.Advance(1)
	assert.Same(t, errExpired, l.Err())
	assert.Zero(t, fake.Pending())
}

// On the system clock (in a synctest bubble): a Renew that hangs does not
// hold up the deadline, and Stop cancels it and waits for it.
func TestHangingRenew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		startAt := time.Now()
		var returned atomic.Bool
		l := renewal.Start(context.Background(), config(lease.SystemClock(), func(ctx context.Context) error {
			<-ctx.Done()
			returned.Store(true)
			return ctx.Err()
		}), startAt)
		<-l.Context().Done()
		assert.Equal(t, testDuration-testMargin, time.Since(startAt), "lost at the deadline")
		assert.Same(t, errExpired, context.Cause(l.Context()))
		assert.Same(t, errExpired, l.Stop())
		assert.True(t, returned.Load(), "the hanging call was cancelled and waited for")
	})
}

// The deadline counts from when the confirming call was sent, not from
// when it returned: a call sent at 10 s that takes 5 s moves the deadline
// to 37 s and the next renewal to 20 s.
func TestDeadlineCountsFromTheSentInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		startAt := time.Now()
		var calls []time.Duration
		fail := false
		l := renewal.Start(context.Background(), config(lease.SystemClock(), func(ctx context.Context) error {
			calls = append(calls, time.Since(startAt))
			if fail {
				return errDown
			}
			fail = true
			<-time.After(5 * time.Second)
			return nil
		}), startAt)
		<-l.Context().Done()
		assert.Equal(t, 37*time.Second, time.Since(startAt))
		assert.Equal(t, secs(10, 20, 23, 26, 29, 32, 35), calls)
		l.Stop()
	})
}

// Stop waits for a Renew under way, which sees its context cancelled, and
// nothing runs after Stop returns.
func TestStopWaitsForRenewUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inside := make(chan struct{})
		var calls atomic.Int32
		var finished atomic.Bool
		l := renewal.Start(context.Background(), config(lease.SystemClock(), func(ctx context.Context) error {
			calls.Add(1)
			close(inside)
			<-ctx.Done()
			<-time.After(time.Second) // still busy for a while after the cancellation
			finished.Store(true)
			return ctx.Err()
		}), time.Now())
		<-inside
		assert.NoError(t, l.Stop())
		assert.True(t, finished.Load(), "Stop returned before Renew did")
		<-time.After(time.Hour)
		assert.Equal(t, int32(1), calls.Load())
	})
}

// Stop racing the timers, for the race detector: in a synctest bubble,
// Stop is called at the very instant a renewal or a retry is due, so both
// wake together; whatever the interleaving, nothing runs after Stop.
func TestStopRacesTimers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for k := range 12 {
			var stopped, after atomic.Bool
			var calls atomic.Int32
			l := renewal.Start(context.Background(), config(lease.SystemClock(), func(context.Context) error {
				if stopped.Load() {
					after.Store(true)
				}
				if calls.Add(1)%2 == 0 {
					return errDown // a retry every 3 s, then a renewal again
				}
				return nil
			}), time.Now())
			<-time.After(time.Duration(10+k) * time.Second)
			l.Stop()
			stopped.Store(true)
			<-time.After(time.Minute)
			require.False(t, after.Load(), "Renew ran after Stop returned (k=%d)", k)
		}
	})
}

// reentrantClock calls back into a Loop from Now, AfterFunc and Stop, as a
// user's clock may (a wrapper that logs the state of what it times).
type reentrantClock struct {
	*leasetest.FakeClock
	loop  atomic.Pointer[renewal.Loop]
	calls atomic.Int32
}

func (c *reentrantClock) poke() {
	if l := c.loop.Load(); l != nil {
		_ = l.Err()
		c.calls.Add(1)
	}
}

func (c *reentrantClock) Now() time.Time {
	c.poke()
	return c.FakeClock.Now()
}

func (c *reentrantClock) AfterFunc(d time.Duration, f func()) lease.Timer {
	c.poke()
	return reentrantTimer{c, c.FakeClock.AfterFunc(d, f)}
}

type reentrantTimer struct {
	c *reentrantClock
	t lease.Timer
}

func (t reentrantTimer) Stop() bool {
	t.c.poke()
	return t.t.Stop()
}

// The Loop never holds its lock while it calls its clock.
func TestClockMayCallBack(t *testing.T) {
	clock := &reentrantClock{FakeClock: leasetest.NewFakeClock(epoch)}
	s := &script{clock: clock}
	l := renewal.Start(context.Background(), config(clock, s.renew), epoch)
	clock.loop.Store(l)
	done := make(chan struct{})
	go func() {
		defer close(done)
		clock.Advance(15 * time.Second) // a renewal
		s.set(errDown)
		clock.Advance(time.Minute) // retries, then the deadline
		l.Stop()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the Loop deadlocked on a clock that calls back into it")
	}
	assert.Same(t, errExpired, l.Err())
	assert.Positive(t, clock.calls.Load())
}

// Cancel ends the Loop without waiting, so Renew itself may call it (as a
// holder does when the renewal's own call learns the hold is over): the
// Loop's context is cancelled, the renewal's outcome is ignored, nothing
// runs again, and Stop then returns at once.
func TestCancelFromRenew(t *testing.T) {
	clock := leasetest.NewFakeClock(epoch)
	var l *renewal.Loop
	calls := 0
	l = renewal.Start(context.Background(), config(clock, func(ctx context.Context) error {
		calls++
		l.Cancel()
		assert.ErrorIs(t, ctx.Err(), context.Canceled, "the renewal's context is cancelled")
		return errDown
	}), epoch)
	clock.Advance(10 * time.Second)
	assert.Equal(t, 1, calls)
	assert.ErrorIs(t, l.Context().Err(), context.Canceled)
	assert.Zero(t, clock.Pending(), "no timer left behind")
	clock.Advance(time.Hour)
	assert.Equal(t, 1, calls, "nothing runs after Cancel")
	assert.NoError(t, l.Stop(), "cancelled, not lost")
	l.Cancel() // idempotent
}

// Cancel between renewals stops the timer at once.
func TestCancelBetweenRenewals(t *testing.T) {
	l, clock, s := start(t)
	clock.Advance(15 * time.Second)
	l.Cancel()
	assert.Zero(t, clock.Pending())
	assert.ErrorIs(t, l.Context().Err(), context.Canceled)
	clock.Advance(time.Hour)
	assert.Equal(t, secs(10), s.called())
	assert.NoError(t, l.Err())
}
