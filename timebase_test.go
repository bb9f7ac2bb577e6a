package lease_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// wallClock is a FakeClock whose reading can also be stepped, as an NTP
// step or a VM restore steps a wall clock. Timers stay on the fake clock.
type wallClock struct {
	*leasetest.FakeClock
	step atomic.Int64
}

func (c *wallClock) Now() time.Time { return c.FakeClock.Now().Add(time.Duration(c.step.Load())) }

// TestClockStepBackIsTimeStandingStill steps the clock back an hour under a live
// lease: the service's time stands still (the lease neither expires nor
// gains time) until the clock catches up, and a step forward is honoured.
func TestClockStepBackIsTimeStandingStill(t *testing.T) {
	clk := &wallClock{FakeClock: leasetest.NewFakeClock(t0)}
	s := lease.Must(lease.New(lease.WithClock(clk)))
	defer s.Close()
	l := grant(t, s, lease.Operation, 30*time.Second)
	clk.Advance(10 * time.Second)
	seen := s.Clock().Now()

	clk.step.Store(int64(-time.Hour))
	clk.Advance(50 * time.Second) // the wall clock reads t0-1h+60s
	assert.Equal(t, seen, s.Clock().Now(), "time stands still while the clock is behind")
	_, err := s.Info(ctx, l.ID)
	require.NoError(t, err, "the lease has not expired: no service time passed")

	clk.step.Store(0) // forward again: the wall reads t0+60s
	assert.Equal(t, t0.Add(time.Minute), s.Clock().Now().UTC())
	_, err = s.Info(ctx, l.ID)
	require.ErrorIs(t, err, lease.ErrExpired, "a step forward is honoured")
}

// TestClockTimersCountOnTheTimeBase arms a timer on the service's Clock,
// steps the clock back and advances the fake clock past the timer's
// deadline: the timer does not fire until the service's time has advanced
// by the whole delay.
func TestClockTimersCountOnTheTimeBase(t *testing.T) {
	clk := &wallClock{FakeClock: leasetest.NewFakeClock(t0)}
	s := lease.Must(lease.New(lease.WithClock(clk)))
	defer s.Close()
	fired := false
	s.Clock().AfterFunc(10*time.Second, func() { fired = true })
	clk.step.Store(int64(-time.Minute))
	clk.Advance(30 * time.Second) // service time: still t0
	assert.False(t, fired, "fired early on a clock that stepped back")
	clk.Advance(40 * time.Second) // the wall reads t0+10s
	assert.True(t, fired)

	stopped := s.Clock().AfterFunc(time.Second, func() { t.Error("stopped timer fired") })
	require.True(t, stopped.Stop())
	require.False(t, stopped.Stop())
	clk.Advance(time.Hour)
}

// TestMonotonicClockNeverRunsBackwards checks MonotonicClock on a clock that
// steps back: its Now never decreases.
func TestMonotonicClockNeverRunsBackwards(t *testing.T) {
	clk := &wallClock{FakeClock: leasetest.NewFakeClock(t0)}
	m := lease.MonotonicClock(clk)
	clk.Advance(time.Second)
	a := m.Now()
	clk.step.Store(int64(-time.Hour))
	assert.Equal(t, a, m.Now())
	assert.Same(t, m, lease.MonotonicClock(m), "a monotonic clock is not wrapped twice")
}
