package lock

import (
	"container/list"
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/lockkit"
)

// Waiter is implemented by a Provider that can wait for a lock without
// polling: it learns when a lock is freed and offers it to its waiters at
// once. Manager.Lock uses it when the provider has it, and polls otherwise.
// Implementations must be safe for concurrent use and keep this contract:
//
//   - AcquireWait acquires name as Acquire (or AcquireValue, with value)
//     would, waiting while the lock is held or in its lock-delay. It returns
//     a new Lease, never nil, nil.
//   - When ctx is done first it returns ctx.Err() and the caller holds
//     nothing: a lease acquired as ctx ended is released before returning.
//   - Bad input is refused as Acquire and lockprovider.CheckValue refuse it; a failure of
//     the provider is an error.
//
// A Manager over a Waiter that is also a TimeBase counts the lease's safety
// deadline from its grant, ExpiresAt - d on the provider's clock (which is
// the Manager's); over any other Waiter it confirms the lease with a Renew,
// timed on its own clock, before running the function.
type Waiter interface {
	AcquireWait(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error)
}

// waitQueues are a Memory's waiters, one FIFO queue per lock name. They are
// guarded by their own mutex, which is never held across a call into the
// service or a clock: waking a waiter is a send on its buffered channel.
type waitQueues struct {
	mu     sync.Mutex
	byName map[string]*list.List // of *waiter; a queue is removed once empty
	// sub is the Memory's subscription to its service's endings, made by
	// the first AcquireWait.
	sub atomic.Pointer[subscription]
}

type subscription struct{ ready chan struct{} }

// waiter is one AcquireWait call in a queue.
type waiter struct {
	wake        chan struct{} // capacity 1: a wake-up is never lost, never blocks
	executionID string        // who waits, for WaitInspector
	since       time.Time     // when it started waiting, on the service's clock
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

// AcquireWait acquires the lock name for executionID with a lease of d and
// value attached (as AcquireValue), waiting while it is held or in its
// lock-delay, until ctx is done. It makes Memory a Waiter.
//
// Waiting is not polling. The Memory's waiters for a name form a queue, and
// only the first of them tries to acquire: when the lock is freed (a
// Release through this Memory, or the service's notice that the lock's
// lease ended: revoked or expired), or when its lock-delay ends (a timer on
// the service's Clock), the first waiter is woken and tries at once. The
// longest waiter is thus offered the lock first; a waiter whose context
// ends leaves the queue, and if it was first, the next one gets its turn at
// once. Callers of Acquire and TryLock do not queue: one may take a freed
// lock before the first waiter's attempt, which then waits for the next
// release without losing its place.
//
// The first AcquireWait subscribes the Memory to its service's endings
// (lease.Service.OnEnd) for the life of the service. A waiter is woken by
// an expiry only once the service delivers the ending, so a notification
// callback of the service that waits for a lock that only an expiry can
// free waits until its ctx ends; Release wakes waiters directly.
//
// On a closed service it fails with an error matching lease.ErrClosed.
func (m *Memory) AcquireWait(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error) {
	if err := lockkit.CheckAcquire(ctx, name, executionID, d); err != nil {
		return nil, err
	}
	if err := lockkit.CheckValue(value, MaxValueSize); err != nil {
		return nil, err
	}
	m.subscribe()
	w, e := m.waits.enqueue(name, executionID, m.svc.Clock().Now())
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
			l, err := m.acquire(ctx, name, executionID, d, value)
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
			if at, ok := m.retryAt(name, d); ok {
				timer = m.svc.Clock().AfterFunc(at.Sub(m.svc.Clock().Now()), w.signal)
			}
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-m.svc.Done():
			return nil, &lease.Error{Package: "lock", Code: lease.CodeClosed, Op: "acquire"}
		}
	}
}

// retryAt says when a waiter refused name should try again if no ending
// wakes it first: when the lock-delay recorded for name ends (if the lock is
// still held, the timer only wakes it early, and it waits again). While a
// call that extends a lease of the name is under way the record cannot tell,
// so it polls: after a tenth of d, at least 10 ms.
func (m *Memory) retryAt(name string, d time.Duration) (time.Time, bool) {
	if m.delay <= 0 {
		return time.Time{}, false
	}
	m.mu.Lock()
	r := m.ended.get(name)
	m.mu.Unlock()
	now := m.svc.Clock().Now()
	switch {
	case r.underWay > 0:
		return now.Add(lockkit.PollInterval(d)), true
	case r.id == 0:
		return time.Time{}, false
	}
	end := r.expiresAt.Add(m.delay)
	return end, end.After(now)
}

// subscribe makes sure the Memory hears of its service's endings before a
// waiter's first attempt, so that no ending after the attempt goes
// unnoticed. The subscription lasts as long as the service.
func (m *Memory) subscribe() {
	s := m.waits.sub.Load()
	if s == nil {
		s = &subscription{ready: make(chan struct{})}
		if m.waits.sub.CompareAndSwap(nil, s) {
			m.svc.OnEnd(m.onEnd)
			close(s.ready)
			return
		}
		s = m.waits.sub.Load()
	}
	<-s.ready
}

// onEnd is the Memory's ending subscriber: every lock key a lease took with
// it wakes that lock's first waiter.
func (m *Memory) onEnd(l lease.Lease, _ lease.EndReason) {
	for _, k := range l.Keys {
		if name, ok := strings.CutPrefix(k, m.prefix); ok {
			m.waits.wake(name)
		}
	}
}

// wake offers name to its first waiter.
func (m *Memory) wake(name string) { m.waits.wake(name) }
