package sqlclaim

import (
	"sync"
	"time"
)

// Hub wakes waiters by key: the waiters of one key (a queue, a lock's
// name) share one channel, closed to wake them all, and a key whose
// waiters are gone is forgotten, so the hub is bounded by its waiters. A
// key may also have a timer that wakes its waiters by a deadline, for a
// store that polls, or that knows when something becomes due. A Hub is
// safe for concurrent use; it calls no code of its user.
type Hub[K comparable] struct {
	mu      sync.Mutex
	keys    map[K]*wake
	waiters int
	closed  bool
}

// wake is the channel the waiters of one key share.
type wake struct {
	ch     chan struct{}
	refs   int
	timer  *time.Timer // nil when none
	fireAt time.Time   // when timer fires
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// NewHub returns an empty Hub.
func NewHub[K comparable]() *Hub[K] { return &Hub[K]{keys: map[K]*wake{}} }

// Arm returns the channel closed at the next wake-up of key, and the
// function that says the waiter no longer needs it. A waiter arms before
// looking for what it waits for, so that nothing after the look goes
// unheard. If key has no channel yet, within is called (under the hub's
// lock: it must not call the hub) for the longest wait before its waiters
// wake anyway; 0 or less is no bound. After Close the channel is closed.
func (h *Hub[K]) Arm(key K, within func() time.Duration) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return closedChan, func() {}
	}
	w := h.keys[key]
	if w == nil {
		w = &wake{ch: make(chan struct{})}
		if within != nil {
			if d := within(); d > 0 {
				w.fireAt = time.Now().Add(d)
				w.timer = time.AfterFunc(d, func() { h.fire(key, w) })
			}
		}
		h.keys[key] = w
	}
	w.refs++
	h.waiters++
	var once sync.Once
	return w.ch, func() { once.Do(func() { h.disarm(key, w) }) }
}

// disarm drops one waiter of w, forgetting w with the last.
func (h *Hub[K]) disarm(key K, w *wake) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w.refs--
	h.waiters--
	if w.refs == 0 && h.keys[key] == w {
		h.dropLocked(key, w)
	}
}

// Waiters returns how many waiters are armed and not yet stopped, woken
// or not.
func (h *Hub[K]) Waiters() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiters
}

// Keys returns how many keys have a channel armed.
func (h *Hub[K]) Keys() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.keys)
}

// fire is the timer of w: its deadline passed.
func (h *Hub[K]) fire(key K, w *wake) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.keys[key] == w {
		h.wakeLocked(key, w)
	}
}

func (h *Hub[K]) dropLocked(key K, w *wake) {
	if w.timer != nil {
		w.timer.Stop()
	}
	delete(h.keys, key)
}

func (h *Hub[K]) wakeLocked(key K, w *wake) {
	h.dropLocked(key, w)
	close(w.ch)
}

// Wake wakes the waiters of key.
func (h *Hub[K]) Wake(key K) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.keys[key]; w != nil {
		h.wakeLocked(key, w)
	}
}

// WakeAll wakes every waiter.
func (h *Hub[K]) WakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for key, w := range h.keys {
		h.wakeLocked(key, w)
	}
}

// WakeBy makes sure the waiters of key, if any, wake by at.
func (h *Hub[K]) WakeBy(key K, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.keys[key]
	if w == nil || (w.timer != nil && !at.Before(w.fireAt)) {
		return
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.fireAt = at
	w.timer = time.AfterFunc(max(time.Until(at), 0), func() { h.fire(key, w) })
}

// Close wakes every waiter, and makes later ones return at once.
func (h *Hub[K]) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for key, w := range h.keys {
		h.wakeLocked(key, w)
	}
	h.closed = true
}
