package renewal

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasehold/lease"
)

// Config is what a Loop renews and on which schedule. Check the durations
// with Validate first: Start trusts them. A Config is a plain value; Start
// copies it.
type Config struct {
	// Clock times the renewals and the safety deadline. Give it a clock
	// whose Now never runs backwards (a service's Clock, or
	// lease.MonotonicClock of another): the Loop copes with timers that fire
	// early, not with deadlines read from a clock that went back.
	Clock lease.Clock
	// Duration is the lease each renewal asks for. Renewals are due every
	// Interval(Duration) from the instant the last confirming call was sent.
	Duration time.Duration
	// Margin is how long before the last confirmed expiry the Loop gives
	// the hold up if no renewal has confirmed it since.
	Margin time.Duration
	// Retry is how soon a renewal that failed is tried again.
	Retry time.Duration
	// Renew renews the thing held, once per call. It returns nil when the
	// renewal confirmed the hold, an error made by Lost when the thing is
	// gone (the hold ends at once), and any other error when the renewal
	// failed and may be retried. ctx is cancelled when the Loop stops or the
	// hold is lost, so that a call that hangs gives up; it carries the
	// values of the context given to Start. Renew is never called
	// concurrently with itself, must not panic (wrap user code with
	// callback.Call) and must not call Stop.
	Renew func(ctx context.Context) error
	// Expired is the cause the Loop's context is cancelled with at the
	// safety deadline. It must not be nil.
	Expired error
	// Lost, if not nil, is called once with the cause when the hold is
	// lost, right after the Loop's context is cancelled: inside Start when
	// the deadline has already passed, else on the clock's goroutine that
	// found the loss, before Stop can return. It runs with no lock held,
	// must not panic and must not call Stop.
	Lost func(cause error)
}

// Lost marks the error a Renew returns when the thing held is gone: the
// Loop then ends the hold at once, with cause as the cause of its context.
// It panics if cause is nil.
func Lost(cause error) error {
	if cause == nil {
		panic("renewal: Lost: nil cause")
	}
	return &lostError{cause}
}

type lostError struct{ cause error }

func (e *lostError) Error() string { return "renewal: lost: " + e.cause.Error() }
func (e *lostError) Unwrap() error { return e.cause }

// Loop holds one thing alive: it renews it on schedule and cancels its
// context when the hold is lost. Start one with Start and end it with Stop.
//
// A Loop is safe for concurrent use. Its callbacks run on the clock's
// goroutines (inside Advance for a leasetest.FakeClock) and never hold the
// Loop's lock while calling Renew or the clock.
type Loop struct {
	cfg    Config
	parent context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	// wg counts the armed timer and the callback under way, so that Stop
	// waits for exactly the callbacks that started.
	wg sync.WaitGroup

	mu sync.Mutex
	// deadline is the safety deadline: the hold is lost at this instant
	// unless a renewal confirms it first.
	deadline time.Time
	// next is when the next renewal is due; zero when none is (a renewal is
	// under way, or no retry could land before the deadline).
	next  time.Time
	timer lease.Timer
	// gen is the generation of the timer armed last. On a real clock a
	// timer can fire while another is being armed, and Stop cannot prevent
	// a callback that already started: a callback of an older generation
	// does nothing.
	gen      uint64
	renewing bool
	// rctx is the renewals' context, made at the first renewal (most holds
	// end before one is due) and cancelled by Stop or a loss.
	rctx    context.Context
	rcancel context.CancelFunc
	cause   error // why the hold was lost; nil while held
	stopped bool
}

// Start begins holding a thing confirmed by a call that was sent at sent,
// on cfg.Clock. The Loop's context is a child of ctx. If the safety
// deadline (sent + Duration - Margin) has already passed, the hold is lost
// at once and Err says so.
func Start(ctx context.Context, cfg Config, sent time.Time) *Loop {
	l := &Loop{cfg: cfg, parent: ctx}
	l.ctx, l.cancel = context.WithCancelCause(ctx)
	now := cfg.Clock.Now()
	l.mu.Lock()
	l.confirmedLocked(sent)
	l.settleLocked(now)
	return l
}

// Context returns the context of the hold. It is cancelled with the cause
// of the loss (the error given to Lost, or Config.Expired at the safety
// deadline) when the hold is lost, with context.Canceled by Stop, and with
// the cause of the context given to Start when that is done.
func (l *Loop) Context() context.Context { return l.ctx }

// Err returns the cause of the loss once the hold is lost, nil while it is
// held.
func (l *Loop) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cause
}

// Stop ends the Loop: no renewal starts after it, a renewal under way has
// its context cancelled and is waited for, the Loop's context is cancelled,
// and no callback of the Loop runs once Stop has returned. It returns the
// cause of the loss if the hold was lost, nil otherwise. Stop is
// idempotent; it must not be called from Renew.
func (l *Loop) Stop() error {
	l.halt()
	l.wg.Wait()
	l.cancel(context.Canceled)
	return l.Err()
}

// Cancel ends the Loop like Stop but does not wait: no renewal starts
// after it, its timer is stopped, a renewal under way has its context
// cancelled (its outcome is ignored), and the Loop's context is cancelled.
// It runs no user code but the clock's Timer.Stop, so, unlike Stop, it may
// be called from Renew and under a lock that Renew takes: a holder that
// must end the hold inside such a critical section cancels there and calls
// Stop later, outside it, to wait for the renewal under way. Cancel is
// idempotent.
func (l *Loop) Cancel() {
	l.halt()
	l.cancel(context.Canceled)
}

// halt marks the Loop stopped, cancels a renewal under way and stops the
// timer.
func (l *Loop) halt() {
	l.mu.Lock()
	l.stopped = true
	t, rcancel := l.timer, l.rcancel
	l.timer = nil
	l.mu.Unlock()
	if rcancel != nil {
		rcancel()
	}
	l.stopTimer(t)
}

// confirmedLocked moves the schedule after a call sent at sent confirmed
// the hold. Called with mu held.
func (l *Loop) confirmedLocked(sent time.Time) {
	l.deadline = sent.Add(l.cfg.Duration - l.cfg.Margin)
	l.next = sent.Add(Interval(l.cfg.Duration))
}

// settleLocked ends the hold if its deadline has passed at now, and arms
// the timer for whatever is due next otherwise. It is called with mu held
// and releases it.
func (l *Loop) settleLocked(now time.Time) {
	if !now.Before(l.deadline) {
		l.loseLocked(l.cfg.Expired)
		return
	}
	at := l.deadline
	if !l.next.IsZero() && l.next.Before(at) {
		at = l.next
	}
	l.gen++
	gen, old := l.gen, l.timer
	l.timer = nil
	l.mu.Unlock()

	l.stopTimer(old)
	l.wg.Add(1) // before Stop can Wait: we run inside Start or a counted callback
	t := l.cfg.Clock.AfterFunc(at.Sub(now), func() { l.fire(gen) })
	l.mu.Lock()
	if gen == l.gen && !l.stopped && l.cause == nil {
		l.timer = t
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	l.stopTimer(t) // stopped, lost or re-armed while we armed it
}

// loseLocked ends the hold with cause. It is called with mu held and
// releases it.
func (l *Loop) loseLocked(cause error) {
	l.cause = cause
	t, rcancel := l.timer, l.rcancel
	l.timer = nil
	l.mu.Unlock()
	if rcancel != nil {
		rcancel() // a renewal under way no longer matters
	}
	l.stopTimer(t)
	l.cancel(cause)
	if l.cfg.Lost != nil {
		l.cfg.Lost(cause)
	}
}

// stopTimer stops t; if that prevented its callback, it uncounts it.
func (l *Loop) stopTimer(t lease.Timer) {
	if t != nil && t.Stop() {
		l.wg.Done()
	}
}

// fire is the timer's callback.
func (l *Loop) fire(gen uint64) {
	defer l.wg.Done()
	now := l.cfg.Clock.Now()
	l.mu.Lock()
	if gen != l.gen || l.stopped || l.cause != nil {
		l.mu.Unlock()
		return
	}
	l.timer = nil
	if !now.Before(l.deadline) || l.renewing || l.next.IsZero() || now.Before(l.next) {
		// The deadline passed, or the timer fired early (the clock stepped
		// back): settle ends the hold or re-arms.
		l.settleLocked(now)
		return
	}
	l.renewing = true
	l.next = time.Time{}
	if l.rctx == nil {
		l.rctx, l.rcancel = context.WithCancel(context.WithoutCancel(l.parent))
	}
	rctx := l.rctx
	l.settleLocked(now) // arms the deadline, which must fire even if Renew hangs

	sent := l.cfg.Clock.Now()
	err := l.cfg.Renew(rctx)
	now = l.cfg.Clock.Now()

	l.mu.Lock()
	l.renewing = false
	if l.stopped || l.cause != nil {
		l.mu.Unlock()
		return
	}
	var lost *lostError
	switch {
	case err == nil:
		l.confirmedLocked(sent)
	case errors.As(err, &lost):
		l.loseLocked(lost.cause)
		return
	case now.Add(l.cfg.Retry).Before(l.deadline):
		l.next = now.Add(l.cfg.Retry)
	}
	l.settleLocked(now)
}
