package keylock

import (
	"container/list"
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock/lockprovider"
)

// waitQueues are the waiters of Locks, one FIFO queue per lock name. They
// are guarded by their own mutex, which is never held across a call into
// the backend or a clock: waking a waiter is a send on its buffered channel.
type waitQueues struct {
	mu     sync.Mutex
	byName map[string]*list.List // of *waiter; a queue is removed once empty
	// sub is the subscription to the backend's endings, made by the first
	// AcquireWait.
	sub atomic.Pointer[subscription]
}

type subscription struct{ ready chan struct{} }

// waiter is one AcquireWait call in a queue.
type waiter struct {
	wake        chan struct{} // capacity 1: a wake-up is never lost, never blocks
	executionID string        // who waits, for Waiting
	since       time.Time     // when it started waiting, on the Locks' clock
}

func newWaitQueues() waitQueues {
	return waitQueues{byName: make(map[string]*list.List)}
}

func (w *waiter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// enqueue puts a new waiter for executionID, waiting since since, at the
// back of name's queue.
func (q *waitQueues) enqueue(name, executionID string, since time.Time) (*waiter, *list.Element) {
	w := &waiter{wake: make(chan struct{}, 1), executionID: executionID, since: since}
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.byName[name]
	if l == nil {
		l = list.New()
		q.byName[name] = l
	}
	return w, l.PushBack(w)
}

// first reports whether e is at the front of name's queue: its turn to try.
func (q *waitQueues) first(name string, e *list.Element) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.byName[name].Front() == e
}

// leave takes e out of name's queue. A waiter that leaves its turn without
// the lock (its context ended, or it failed) passes the turn on: the lock
// may be free and nobody else would be told.
func (q *waitQueues) leave(name string, e *list.Element, acquired bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.byName[name]
	wasFirst := l.Front() == e
	l.Remove(e)
	if l.Len() == 0 {
		delete(q.byName, name)
		return
	}
	if wasFirst && !acquired {
		l.Front().Value.(*waiter).signal()
	}
}

// wake offers name to the first of its waiters, if any.
func (q *waitQueues) wake(name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if l := q.byName[name]; l != nil {
		l.Front().Value.(*waiter).signal()
	}
}

// AcquireWait acquires the lock name as Acquire, waiting while it is held
// or in its lock-delay, until ctx is done; it returns a Lease, never nil,
// nil. Only the first waiter of a name tries; it is woken when the lock is
// freed (a Release through these Locks, or the backend's notice that the
// lock's lease ended), when its lock-delay ends, and, with a Recheck, when
// that long has passed without either. A waiter that leaves its turn
// without the lock passes it on at once.
func (m *Locks) AcquireWait(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error) {
	const op = "acquire"
	if err := m.open(op); err != nil {
		return nil, err
	}
	m.subscribe()
	w, e := m.waits.enqueue(name, executionID, m.clock.Now())
	acquired := false
	defer func() { m.waits.leave(name, e, acquired) }()
	var timer lease.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if m.waits.first(name, e) {
			l, err := m.Acquire(ctx, name, executionID, d, value)
			if err != nil {
				return nil, err
			}
			if l != nil {
				if err := ctx.Err(); err != nil {
					_ = m.Release(context.WithoutCancel(ctx), []Lease{*l})
					return nil, err
				}
				acquired = true
				return l, nil
			}
			// Held, or in its lock-delay: an ending wakes us for the
			// first, a timer for the second.
			if timer != nil {
				timer.Stop()
				timer = nil
			}
			if after, ok := m.retryAfter(name, d); ok {
				timer = m.clock.AfterFunc(after, w.signal)
			}
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-m.done:
			return nil, m.closed(op)
		}
	}
}

// retryAfter says how long a waiter refused name should wait before trying
// again if no ending wakes it first: until the lock-delay recorded for name
// ends (if the lock is still held, the timer only wakes it early, and it
// waits again), and at most the Recheck. While a call that extends a lease
// of the name is under way the record cannot tell, so it polls: after a
// tenth of d, at least 10 ms.
func (m *Locks) retryAfter(name string, d time.Duration) (time.Duration, bool) {
	after, ok := m.delayEnds(name, d)
	if m.recheck > 0 && (!ok || m.recheck < after) {
		return m.recheck, true
	}
	return after, ok
}

// delayEnds says how long until the lock-delay recorded for name ends.
func (m *Locks) delayEnds(name string, d time.Duration) (time.Duration, bool) {
	if m.delay <= 0 {
		return 0, false
	}
	m.mu.Lock()
	r := m.ended.get(name)
	m.mu.Unlock()
	switch {
	case r.underWay > 0:
		return lockprovider.PollInterval(d), true
	case r.id == 0:
		return 0, false
	}
	left := r.expiresAt.Add(m.delay).Sub(m.clock.Now())
	return left, left > 0
}

// subscribe makes sure the Locks hear of the backend's endings before a
// waiter's first attempt, so that no ending after the attempt goes
// unnoticed. The subscription lasts as long as the backend.
func (m *Locks) subscribe() {
	s := m.waits.sub.Load()
	if s == nil {
		s = &subscription{ready: make(chan struct{})}
		if m.waits.sub.CompareAndSwap(nil, s) {
			m.b.OnEnd(m.onEnd)
			close(s.ready)
			return
		}
		s = m.waits.sub.Load()
	}
	<-s.ready
}

// onEnd is the Locks' ending subscriber: every lock key a lease took with
// it wakes that lock's first waiter.
func (m *Locks) onEnd(l lease.Lease, _ lease.EndReason) {
	for _, k := range l.Keys {
		if name, ok := strings.CutPrefix(k, m.prefix); ok {
			m.waits.wake(name)
		}
	}
}

// Queued returns how many AcquireWait calls wait for name.
func (m *Locks) Queued(name string) int {
	m.waits.mu.Lock()
	defer m.waits.mu.Unlock()
	if l := m.waits.byName[name]; l != nil {
		return l.Len()
	}
	return 0
}
