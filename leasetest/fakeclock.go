package leasetest

import (
	"container/heap"
	"sync"
	"time"

	"github.com/leasehold/lease"
)

// FakeClock is a lease.Clock whose time moves only when Advance, Set or
// Rewind is called. AfterFunc callbacks run synchronously inside Advance, in
// deadline order (ties in the order they were scheduled), with Now reading
// their deadline while they run; callbacks that schedule new timers due by
// the target time run too. So after Advance returns, everything due by the
// new time has happened, and no goroutine is involved. Rewind steps the
// clock back, as a wall clock can.
//
// A FakeClock is safe for concurrent use. Concurrent Advance, Set and Rewind
// calls are serialised.
type FakeClock struct {
	advancing sync.Mutex // serialises Advance, Set and Rewind

	mu      sync.Mutex
	now     time.Time
	seq     uint64
	waiters waiterHeap
}

// NewFakeClock returns a FakeClock reading start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start}
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run when the clock reaches Now()+d. f never runs
// inside AfterFunc: a timer with d <= 0 runs on the next Advance (Advance(0)
// included).
func (c *FakeClock) AfterFunc(d time.Duration, f func()) lease.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	w := &waiter{clock: c, at: c.now.Add(d), seq: c.seq, f: f}
	heap.Push(&c.waiters, w)
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
		if len(c.waiters) == 0 || c.waiters[0].at.After(target) {
			c.now = target
			c.mu.Unlock()
			return
		}
		w := heap.Pop(&c.waiters).(*waiter)
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
	return len(c.waiters)
}

// NextDeadline returns the earliest pending deadline, if any.
func (c *FakeClock) NextDeadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiters) == 0 {
		return time.Time{}, false
	}
	return c.waiters[0].at, true
}

type waiter struct {
	clock *FakeClock
	at    time.Time
	seq   uint64
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
	heap.Remove(&c.waiters, w.index)
	return true
}

type waiterHeap []*waiter

func (h waiterHeap) Len() int { return len(h) }
func (h waiterHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h waiterHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *waiterHeap) Push(x any) {
	w := x.(*waiter)
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *waiterHeap) Pop() any {
	old := *h
	n := len(old) - 1
	w := old[n]
	old[n] = nil
	w.index = -1
	*h = old[:n]
	return w
}
