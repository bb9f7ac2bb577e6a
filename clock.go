package lease

import (
	"sync"
	"time"

	"github.com/leasehold/lease/internal/timebase"
)

// Clock is the source of time for a Service. Implementations must be safe for
// concurrent use. leasetest.FakeClock is one for tests.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f once, on its own goroutine or synchronously from
	// whatever advances the clock, after d has elapsed. It must never call f
	// from within AfterFunc itself.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started; it reports whether it
	// did so.
	Stop() bool
}

// SystemClock returns the Clock of the time package: time.Now and
// time.AfterFunc.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// MonotonicClock returns a Clock reading c that never runs backwards: a step
// back of c reads as time standing still until c catches up, a step forward
// is honoured, and AfterFunc(d, f) runs f once that time has advanced by d.
// A Service's Clock is one; use MonotonicClock for code that keeps time
// without a Service, such as a lock manager over a remote provider. A nil c
// reads as SystemClock(), the default everywhere a Clock is optional. The
// returned Clock is safe for concurrent use.
func MonotonicClock(c Clock) Clock {
	if c == nil {
		c = SystemClock()
	}
	if bc, ok := c.(*baseClock); ok {
		return bc // already one; a second base would disagree with it
	}
	var read func() time.Time // nil: the monotonic clock
	if _, system := c.(systemClock); !system {
		read = c.Now
	}
	return &baseClock{base: timebase.New(read), clock: c}
}

// baseClock is the Clock a Service hands out: its time base, with timers
// that count on that base rather than on the underlying clock.
type baseClock struct {
	base  *timebase.Base
	clock Clock
}

func (c *baseClock) Now() time.Time { return c.base.Time(c.base.Now()) }

// AfterFunc arms a timer of the underlying clock for d. If that clock stepped
// back meanwhile, the timer fires before the service's time has advanced by
// d; it then re-arms for what is left, so f never runs early on the time
// base that everything built on the service decides by.
func (c *baseClock) AfterFunc(d time.Duration, f func()) Timer {
	t := &baseTimer{c: c, at: addSat(c.base.Now(), int64(d)), f: f}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.t = c.clock.AfterFunc(d, t.fire)
	return t
}

type baseTimer struct {
	c  *baseClock
	at int64 // the base time f is due at
	f  func()

	mu   sync.Mutex
	t    Timer // the underlying timer armed now
	done bool  // f started or the timer was stopped
}

func (t *baseTimer) fire() {
	now := t.c.base.Now()
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return
	}
	if now < t.at {
		t.t = t.c.clock.AfterFunc(time.Duration(t.at-now), t.fire)
		t.mu.Unlock()
		return
	}
	t.done = true
	t.mu.Unlock()
	t.f()
}

func (t *baseTimer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return false
	}
	t.done = true
	t.t.Stop()
	return true
}
