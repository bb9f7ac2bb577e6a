package bench

import (
	"sync"
	"time"
)

// Timers is the floor for expiry lag: one Go runtime timer per lease
// (time.AfterFunc), Reset by Renew and stopped by Revoke, behind one mutex.
// No service can expire a lease sooner after its deadline than the runtime
// runs a timer due then, so its lag is what the others' is compared with.
// It is safe for concurrent use.
type Timers struct {
	mu     sync.Mutex
	last   ID
	leases map[ID]*timerLease
	fn     func(ID)
	closed bool
}

type timerLease struct {
	t        *time.Timer
	ttl      time.Duration
	deadline time.Time
}

// NewTimers returns an empty timer table.
func NewTimers() *Timers { return &Timers{leases: make(map[ID]*timerLease)} }

// TimersPeer describes the runtime-timer floor.
func TimersPeer() Peer {
	return Peer{Key: "timers", Name: "Go timers", New: func() (Leaser, error) { return NewTimers(), nil }}
}

func (*Timers) concurrent() {}

// OnExpire sets the expiry callback; call it before the first Grant.
func (r *Timers) OnExpire(fn func(ID)) { r.fn = fn }

// Grant starts a timer for ttl.
func (r *Timers) Grant(ttl time.Duration) (ID, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last++
	id := r.last
	l := &timerLease{ttl: ttl, deadline: time.Now().Add(ttl)}
	l.t = time.AfterFunc(ttl, func() { r.expire(id, l) })
	r.leases[id] = l
	return id, nil
}

func (r *Timers) expire(id ID, l *timerLease) {
	r.mu.Lock()
	if r.closed || r.leases[id] != l || time.Now().Before(l.deadline) {
		r.mu.Unlock() // stopped, or renewed since the timer fired
		return
	}
	delete(r.leases, id)
	fn := r.fn
	r.mu.Unlock()
	if fn != nil {
		fn(id)
	}
}

// Renew resets the lease's timer to its TTL from now.
func (r *Timers) Renew(id ID) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.leases[id]
	if l == nil {
		return ErrUnknown
	}
	l.deadline = time.Now().Add(l.ttl)
	l.t.Reset(l.ttl)
	return nil
}

// Revoke stops the lease's timer.
func (r *Timers) Revoke(id ID) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.leases[id]
	if l == nil {
		return ErrUnknown
	}
	l.t.Stop()
	delete(r.leases, id)
	return nil
}

// Deadline returns when the lease's timer is due.
func (r *Timers) Deadline(id ID) (time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.leases[id]
	if l == nil {
		return time.Time{}, ErrUnknown
	}
	return l.deadline, nil
}

// Close stops every timer; no callback runs after it returns except one
// already under way.
func (r *Timers) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for id, l := range r.leases {
		l.t.Stop()
		delete(r.leases, id)
	}
	return nil
}
