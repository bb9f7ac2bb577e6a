package leasetest

import (
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/heap"
)

// FakeClock is a lease.Clock whose time moves only when Advance, Set or
// Rewind is called. AfterFunc callbacks run synchronously inside Advance, in
// deadline order (ties in the order they were scheduled), with Now reading
// their deadline while they run; callbacks that schedule new timers due by
// the target time run too. So after Advance returns, everything due by the
// new time has happened, and no goroutine is involved. Rewind steps the
// clock back, as a wall clock can.
//
// Make one with NewFakeClock. A FakeClock is safe for concurrent use.
// Concurrent Advance, Set and Rewind calls are serialised.
type FakeClock struct {
	advancing sync.Mutex // serialises Advance, Set and Rewind

	mu    sync.Mutex
	now   time.Time
	start time.Time // the waiters' keys count from here
	seq   uint64
	// waiters are the pending callbacks in the module's indexed heap, keyed
	// by their deadline in nanoseconds since start, ties in the order they
	// were scheduled (seq).
	waiters heap.Heap[*waiter]
}

// NewFakeClock returns a FakeClock reading start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, start: start, waiters: heap.New(setWaiterIndex)}
}

func setWaiterIndex(w *waiter, i int) { w.index = i }

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run when the clock reaches Now()+d. f never runs
// inside AfterFunc: a timer with d <= 0 runs on the next Advance (Advance(0)
// included). Deadlines are ordered to the nanosecond within about 292 years
// either side of the time the clock was made with; deadlines beyond that
// range count as its end and run in the order they were scheduled.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) lease.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	w := &waiter{clock: c, at: c.now.Add(d), f: f}
	// Sub saturates at the range of a Duration, so a clock Set far ahead
	// still gets an ordered key.
	c.waiters.Push(int64(w.at.Sub(c.start)), c.seq, w)
	return w
}

// Advance moves the clock forward by d, running every callback due by then.
// It panics if d is negative.
func (c *FakeClock) Advance(d time.Duration) {
	if d < 0 {
		panic("leasetest: FakeClock.Advance with a negative duration")
	}
	c.advancing.Lock()
	defer c.advancing.Unlock()
	c.mu.Lock()
	target := c.now.Add(d)
	c.mu.Unlock()
	c.advanceTo(target)
}

// Set moves the clock to t, running every callback due by then, like
// Advance. It panics if t is before Now().
func (c *FakeClock) Set(t time.Time) {
	c.advancing.Lock()
	defer c.advancing.Unlock()
	if t.Before(c.Now()) {
		panic("leasetest: FakeClock.Set to a time before Now")
	}
	c.advanceTo(t)
}

// Rewind moves the clock back by d, the way a wall clock steps back when
// NTP corrects it or a virtual machine is restored from a snapshot. It runs
// nothing, and pending timers keep their deadlines: they run once Advance
// or Set brings the clock back to them. A lease.Service on the clock reads
// the step as time standing still until the clock catches up. Rewind
// panics if d is negative.
func (c *FakeClock) Rewind(d time.Duration) {
	if d < 0 {
		panic("leasetest: FakeClock.Rewind with a negative duration")
	}
	c.advancing.Lock()
	defer c.advancing.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(-d)
}

func (c *FakeClock) advanceTo(target time.Time) {
	for {
		c.mu.Lock()
		if c.waiters.Len() == 0 || c.waiters.At(0).Val.at.After(target) {
			c.now = target
			c.mu.Unlock()
			return
		}
		w := c.waiters.Pop().Val
		if w.at.After(c.now) {
			c.now = w.at
		}
		c.mu.Unlock()
		w.f() // outside the lock: f may schedule or stop timers
	}
}

// Pending returns the number of scheduled callbacks that have not run or
// been stopped.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waiters.Len()
}

// NextDeadline returns the earliest pending deadline, if any.
func (c *FakeClock) NextDeadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiters.Len() == 0 {
		return time.Time{}, false
	}
	return c.waiters.At(0).Val.at, true
}

type waiter struct {
	clock *FakeClock
	at    time.Time
	f     func()
	index int // position in the heap, -1 once run or stopped
}

// Stop cancels the callback if it has not run; it reports whether it did.
func (w *waiter) Stop() bool {
	c := w.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.index < 0 {
		return false
	}
	c.waiters.Remove(w.index)
	return true
}

// Advancer is a clock whose time moves only when told, as FakeClock's does:
// the one interface by which the conformance suites (claimtest, locktest,
// lock/election/electiontest, backendtest) drive a fake clock. A suite
// given a clock that implements it moves time with Advance and checks
// times exactly; given any other clock it waits in real time. Only the
// suite may move the clock while it runs, from one goroutine at a time,
// and the implementation under test must read its time from that clock.
type Advancer interface {
	Advance(d time.Duration)
}

var _ Advancer = (*FakeClock)(nil)
