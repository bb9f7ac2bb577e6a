package replicated

import (
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/heap"
)

// logClock is the clock a node's lease.Service reads: the instant of the log
// entry being applied. It moves only when the FSM advances it, before an
// entry stamped with a later instant is applied, and that advance runs every
// timer due by then, synchronously and in deadline order. Every node applies
// the same entries, so every node's service settles the same expiries at the
// same instants. Reads never advance it.
//
// A logClock is safe for concurrent use; its timers run on the goroutine
// that advances it (the FSM's).
type logClock struct {
	mu     sync.Mutex
	now    time.Time
	timers heap.Heap[*logTimer] // keyed by unix nanoseconds
	seq    uint64
	// changed is called, outside mu and without blocking, when the earliest
	// pending deadline may have changed.
	changed func()
}

func newLogClock(start time.Time, changed func()) *logClock {
	return &logClock{now: start, changed: changed, timers: heap.New(setTimerIndex)}
}

// Now returns the instant of the last entry applied.
func (c *logClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms f for Now()+d; it runs when the clock is advanced to or
// past that instant, never from AfterFunc itself.
func (c *logClock) AfterFunc(d time.Duration, f func()) lease.Timer {
	c.mu.Lock()
	c.seq++
	t := &logTimer{c: c, at: c.now.Add(d), f: f}
	c.timers.Push(t.at.UnixNano(), c.seq, t)
	head := t.index == 0
	c.mu.Unlock()
	if head {
		c.changed()
	}
	return t
}

// next returns the earliest pending deadline.
func (c *logClock) next() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timers.Len() == 0 {
		return time.Time{}, false
	}
	return c.timers.At(0).Val.at, true
}

// advance moves the clock to t (never back) and runs every timer due at or
// before the new instant, in deadline order, including timers those armed
// for instants already reached. It reports the clock's instant afterwards.
func (c *logClock) advance(t time.Time) time.Time {
	c.mu.Lock()
	if t.After(c.now) {
		c.now = t
	}
	now := c.now
	ran := false
	for c.timers.Len() > 0 && !c.timers.At(0).Val.at.After(now) {
		tm := c.timers.Pop().Val
		ran = true
		c.mu.Unlock()
		tm.f()
		c.mu.Lock()
	}
	c.mu.Unlock()
	if ran {
		c.changed()
	}
	return now
}

// logTimer is one pending AfterFunc of a logClock.
type logTimer struct {
	c     *logClock
	at    time.Time
	f     func()
	index int // in the heap; -1 once run or stopped
}

// Stop prevents the call if it has not started and reports whether it did.
func (t *logTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	if t.index < 0 {
		c.mu.Unlock()
		return false
	}
	head := t.index == 0
	c.timers.Remove(t.index)
	c.mu.Unlock()
	if head {
		c.changed()
	}
	return true
}

func setTimerIndex(t *logTimer, i int) { t.index = i }
