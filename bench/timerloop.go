package bench

import (
	"sync"
	"time"
)

// TimerLoop is the floor for the expiry lag of a service with its own
// queue: the map+heap baseline behind one mutex, with one runtime timer
// (time.AfterFunc) re-armed for the earliest deadline, and nothing else: no
// audit, no keys, no notifications queue. Its lag is what the Go runtime's
// timers give a design like ours under the same load; Go timers, a timer
// per lease, is the other shape a service could take. It is safe for
// concurrent use.
type TimerLoop struct {
	mu     sync.Mutex
	base   *Baseline
	timer  *time.Timer
	armed  time.Time // the deadline the timer is armed for
	fn     func(ID)
	closed bool
}

// NewTimerLoop returns an empty timer loop.
func NewTimerLoop() *TimerLoop { return &TimerLoop{base: NewBaseline()} }

// TimerLoopPeer describes the one-timer floor.
func TimerLoopPeer() Peer {
	return Peer{Key: "timer-loop", Name: "one Go timer", New: func() (Leaser, error) { return NewTimerLoop(), nil }}
}

func (*TimerLoop) concurrent() {}

// OnExpire sets the expiry callback; call it before the first Grant.
func (t *TimerLoop) OnExpire(fn func(ID)) { t.fn = fn }

// Grant adds a lease and arms the timer if it is now the earliest.
func (t *TimerLoop) Grant(ttl time.Duration) (ID, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	id, err := t.base.Grant(ttl)
	t.rearm()
	return id, err
}

// Renew moves the lease's deadline; the timer is left armed for the old
// head if that is earlier, and fires, finds nothing due and re-arms.
func (t *TimerLoop) Renew(id ID) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.base.Renew(id)
}

// Revoke removes the lease.
func (t *TimerLoop) Revoke(id ID) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.base.Revoke(id)
}

// Deadline returns the lease's deadline.
func (t *TimerLoop) Deadline(id ID) (time.Time, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.base.Deadline(id)
}

// rearm arms the timer for the head unless it is already armed no later.
// Called with the lock held.
func (t *TimerLoop) rearm() {
	if t.closed || len(t.base.heap) == 0 {
		return
	}
	head := t.base.heap[0].deadline
	if t.timer != nil && !t.armed.After(head) {
		return
	}
	if t.timer != nil {
		t.timer.Stop()
	}
	t.armed = head
	t.timer = time.AfterFunc(time.Until(head), t.fire)
}

// fire expires what is due, then calls the callback outside the lock.
func (t *TimerLoop) fire() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.timer = nil
	now := time.Now()
	var due []ID
	for len(t.base.heap) > 0 && !t.base.heap[0].deadline.After(now) {
		it := t.base.heap[0]
		due = append(due, it.id)
		_ = t.base.Revoke(it.id)
	}
	t.rearm()
	fn := t.fn
	t.mu.Unlock()
	if fn != nil {
		for _, id := range due {
			fn(id)
		}
	}
}

// Close stops the timer: no expiry is decided after it returns, though the
// callbacks of a batch decided just before may still be under way.
func (t *TimerLoop) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.timer != nil {
		t.timer.Stop()
	}
	return nil
}
