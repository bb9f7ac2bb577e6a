package lock

import (
	"context"
	"sync"
	"time"

	"github.com/leasehold/lease"
)

// holding is one lock held by a Manager while its function runs: the
// renewal and deadline timers, and the context it cancels.
//
// Timers run as callbacks of the Manager's clock. Each armed timer counts in
// wg until its callback returns or Stop prevents it, so finish can wait for
// exactly the callbacks that started, and none outlives Do.
type holding struct {
	m      *Manager
	ctx    context.Context // fn's
	cancel context.CancelCauseFunc
	parent context.Context
	wg     sync.WaitGroup

	mu sync.Mutex
	// rctx is the renewals' context, made at the first renewal (most
	// functions finish before one is due) and cancelled by finish.
	rctx      context.Context
	rcancel   context.CancelFunc
	lease     Lease
	deadline  time.Time // give up at this instant without a renewal
	renewT    lease.Timer
	deadlineT lease.Timer
	// Generations tell a callback whether it is still the armed one: on a
	// real clock a timer can fire while another call re-arms it, and Stop
	// cannot prevent a callback that already started.
	renewGen, deadlineGen uint64
	lost                  bool
	stopped               bool
}

// hold starts holding l, acquired by a call made at sent.
func (m *Manager) hold(ctx context.Context, l Lease, sent time.Time) *holding {
	h := &holding{m: m, parent: ctx, lease: l}
	h.ctx, h.cancel = context.WithCancelCause(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.confirmed(sent, m.opts.clock.Now())
	return h
}

// confirmed moves the deadline after a call made at sent confirmed the
// lease, and arms the next renewal and the deadline. Called with mu held.
func (h *holding) confirmed(sent, now time.Time) {
	o := &h.m.opts
	h.deadline = sent.Add(o.duration - o.margin)
	if !now.Before(h.deadline) {
		h.loseLocked()
		return
	}
	h.stop(h.deadlineT)
	h.deadlineGen++
	h.deadlineT = h.arm(h.deadline.Sub(now), h.deadlineGen, h.expire)
	h.armRenew(sent.Add(o.duration / 3).Sub(now))
}

// armRenew schedules the next renewal. Called with mu held.
func (h *holding) armRenew(d time.Duration) {
	h.renewGen++
	h.renewT = h.arm(d, h.renewGen, h.renew)
}

func (h *holding) lostAtStart() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lost
}

// arm schedules f(gen) on the clock, counted in wg. Called with mu held
// and before stopped is set, so no Add can race finish's Wait.
func (h *holding) arm(d time.Duration, gen uint64, f func(gen uint64)) lease.Timer {
	h.wg.Add(1)
	return h.m.opts.clock.AfterFunc(d, func() {
		defer h.wg.Done()
		f(gen)
	})
}

// stop cancels a timer; if that prevented its callback, it uncounts it.
func (h *holding) stop(t lease.Timer) {
	if t != nil && t.Stop() {
		h.wg.Done()
	}
}

// renew is the renewal timer's callback. The provider is called without mu
// held, so a slow provider delays nothing but the next renewal, and the
// deadline timer still fires on time.
func (h *holding) renew(gen uint64) {
	h.mu.Lock()
	if h.stopped || h.lost || gen != h.renewGen {
		h.mu.Unlock()
		return
	}
	l := h.lease
	if h.rctx == nil {
		h.rctx, h.rcancel = context.WithCancel(context.WithoutCancel(h.parent))
	}
	rctx := h.rctx
	h.mu.Unlock()

	o := &h.m.opts
	sent := o.clock.Now()
	got, err := h.m.provider.Renew(rctx, []Lease{l}, o.duration)

	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped || h.lost || gen != h.renewGen {
		return
	}
	h.renewT = nil
	now := o.clock.Now()
	if err != nil {
		// Retry while a retry can still land before the deadline; the
		// deadline timer ends the holding otherwise.
		if now.Add(o.retry).Before(h.deadline) {
			h.armRenew(o.retry)
		}
		return
	}
	for _, r := range got {
		if r.Name == l.Name && r.ExecutionID == l.ExecutionID && r.Token == l.Token {
			h.lease = r
			h.confirmed(sent, now)
			return
		}
	}
	h.loseLocked() // the provider says it is no longer ours
}

// expire is the deadline timer's callback.
func (h *holding) expire(gen uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped || h.lost || gen != h.deadlineGen {
		return
	}
	h.deadlineT = nil
	h.loseLocked()
}

// loseLocked gives the lock up: fn's context is cancelled with ErrLockLost
// and the timers stop. Called with mu held.
func (h *holding) loseLocked() {
	h.lost = true
	h.cancel(ErrLockLost)
	h.stop(h.renewT)
	h.stop(h.deadlineT)
	h.renewT, h.deadlineT = nil, nil
}

// outcome is the error Do returns for fn's err.
func (h *holding) outcome(err error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost {
		return lostError(err)
	}
	return err
}

// finish stops the timers, waits for a callback under way, and releases
// the lock. It runs when fn returns or panics.
func (h *holding) finish() {
	h.mu.Lock()
	h.stopped = true
	h.stop(h.renewT)
	h.stop(h.deadlineT)
	h.renewT, h.deadlineT = nil, nil
	l := h.lease
	rcancel := h.rcancel
	h.mu.Unlock()
	if rcancel != nil {
		rcancel() // a renewal under way gives up
	}
	h.wg.Wait()
	h.cancel(context.Canceled)
	// Release even a lost lease: a renewal that failed with an error may
	// have left it held, and Release never frees another holder's lock.
	if err := h.m.provider.Release(context.WithoutCancel(h.parent), []Lease{l}); err != nil && h.m.opts.onReleaseError != nil {
		h.m.opts.onReleaseError(l, err)
	}
}
