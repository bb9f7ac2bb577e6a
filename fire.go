package lease

// The service's one timer: arm it for the earliest deadline, and settle a
// burst of expiries in batches when it fires.

import (
	"runtime"
	"time"
)

// rearm makes sure the timer fires no later than the earliest deadline. A
// timer armed earlier than needed is left alone: it fires, finds nothing due
// and re-arms, which is cheaper than re-arming on every renew.
func (s *Service) rearm(now int64) {
	if s.closed || s.heap.Len() == 0 {
		return
	}
	head := s.heap.At(0).Key
	if s.timer != nil && s.timerAt <= head {
		return
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	s.timerGen++
	gen := s.timerGen
	s.timerAt = head
	s.timer = s.opts.clock.AfterFunc(time.Duration(head-now), func() { s.fire(gen) })
}

// fireWork is how much work a timer callback does before it releases the
// lock and delivers the notifications of the leases it settled. A burst of
// a million expiries then never holds the lock for long nor queues more
// than a batch of events at once, and calls get in between batches: a call
// about one lease that is not due answers at once (beginOne); any other
// call settles what is left itself first, so nothing due is ever observed
// as active. Work is counted rather than leases because a lease's keys cost
// more to delete than the lease itself: counting leases, a batch of leases
// with keys held the lock several times longer than one without. A batch
// takes about 0.2 ms, the wait it can add to a call.
const fireWork = 384

// keyWork is the work of deleting one key, in units of settling one lease
// without keys.
const keyWork = 4

// endWork returns the work of settling e.
func endWork(e *entry) int { return 1 + keyWork*int(e.keys) }

// fire is the timer callback: it settles what is due, a batch at a time,
// until nothing due is left. One fire loop runs at a time (s.firing): a
// second one would settle while the first delivers, queueing the whole
// burst's events unbounded. Between batches it yields, because Go's mutex
// lets the goroutine that unlocks take the lock straight back before a
// waiter that was woken runs: without the yield a call would wait for the
// whole burst.
func (s *Service) fire(gen uint64) {
	s.mu.Lock()
	if gen == s.timerGen {
		s.timer = nil
	}
	if s.closed || s.firing {
		// Another fire loop is settling; it re-arms the timer when done.
		s.mu.Unlock()
		return
	}
	s.firing = true
	// The heap keeps its array until the loop ends, instead of copying it
	// into a smaller one a dozen times on the way down, each a stall of
	// milliseconds for a call waiting on the lock.
	s.heap.Hold()
	delivering := false
	defer func() {
		if delivering {
			// A panic escaped delivery (a panic handler that panics): the
			// timer takes over what remains, as it would have from the
			// start.
			s.mu.Lock()
			s.stopFiring()
			s.rearm(s.now())
			s.mu.Unlock()
		}
	}()
	for {
		now := s.now()
		if !s.settleSome(now, fireWork) {
			s.stopFiring()
			s.rearm(now)
			s.unlock()
			return
		}
		delivering = true
		s.unlock()
		delivering = false
		runtime.Gosched() // a caller woken by unlock runs now, on this P
		s.relock()
		if s.closed {
			s.stopFiring()
			s.mu.Unlock()
			return
		}
	}
}

// stopFiring ends a fire loop. Called with the lock held.
func (s *Service) stopFiring() {
	s.firing = false
	s.heap.Release()
}

// relockSpins bounds how many times relock tries the lock, yielding in
// between, before it waits in line.
const relockSpins = 64

// relock takes the lock for the fire loop's next batch. Waiting in
// sync.Mutex's line would not do: a caller calling in a loop re-takes the
// lock each time before the woken fire loop runs, until the mutex turns
// fair after 1 ms, so every batch would cost a millisecond. Trying and
// yielding takes the lock in one of the caller's gaps instead.
func (s *Service) relock() {
	for range relockSpins {
		if s.mu.TryLock() {
			return
		}
		runtime.Gosched()
	}
	s.mu.Lock()
}
