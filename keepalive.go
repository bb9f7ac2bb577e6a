package lease

import (
	"context"
	"slices"
	"time"
)

// keepAlive is the keep-alive state of a lease: the contexts handed out by
// KeepAlive and the next instant the service renews it. Renewals are driven by
// the service's single timer (the lease's heap deadline becomes the next
// renewal), so a keep-alive costs no goroutine.
type keepAlive struct {
	next   int64 // next renewal, nanoseconds since the service epoch
	regs   []*keepAliveReg
	holder string // the lease's, kept here while the record is (see entry)
}

type keepAliveReg struct {
	parent  context.Context         // the caller's: renewals stop once it is done
	cancel  context.CancelCauseFunc // ends the context handed out
	stop    func() bool             // unregisters the parent-done callback
	traceID string
	// draining marks the keep-alive as live while its parent-done callback
	// settles what fell due before the parent was done.
	draining bool
}

// keepAliveInterval is how often a lease with this TTL is renewed.
func keepAliveInterval(ttl int64) int64 { return max(ttl/3, 1) }

// KeepAlive renews the lease now and then every TTL/3 on the service's clock
// until ctx is done or the lease ends. The returned context is done when
// either happens: context.Cause tells which, ctx's own cause when ctx is done
// (renewals stop and the lease is left to expire), or an error matching
// ErrExpired, ErrAlreadyRevoked or ErrClosed when the lease ended or the
// service closed. When ctx is done the returned context follows a moment
// later, once the service has dropped the keep-alive: after it is done no
// renewal of this keep-alive is made, so a test on a fake clock can wait for
// it before advancing the clock. It carries ctx's values and deadline. A
// lease may have several keep-alives; it is renewed while any is live. No
// goroutine runs per keep-alive.
//
// It fails like Renew when the lease is not active.
func (s *Service) KeepAlive(ctx context.Context, id ID) (context.Context, error) {
	op, err := s.openLease(ctx, "keepalive", ActionRenew, "keep-alive refused", id, false)
	if err != nil {
		return nil, err
	}
	defer s.unlock()
	e, now, trace := op.e, op.now, op.trace
	// Not cancelled with ctx itself: dropKeepAlive cancels it once the
	// keep-alive is gone, so its Done means no renewal can follow.
	kctx, cancel := context.WithCancelCause(parentDeadline{context.WithoutCancel(ctx), ctx})
	reg := &keepAliveReg{parent: ctx, cancel: cancel, traceID: trace}
	ka := e.ka()
	if ka == nil {
		ka = &keepAlive{next: e.expires()} // the deadline it had: renew compares with it
		e.setKA(ka)
	}
	ka.regs = append(ka.regs, reg)
	s.renew(e, now, e.ttl)
	s.decide(trace, now, ActionRenew, e, id, nil, "keep-alive started")
	s.rearm(now)
	// Registered last: if ctx is already done the callback runs at once on
	// its own goroutine and waits for the lock we hold.
	// The callback finds the lease by ID: the table may have moved it.
	reg.stop = context.AfterFunc(ctx, func() { s.dropKeepAlive(id, reg) })
	return kctx, nil
}

// parentDeadline is a context that reports its parent's deadline while
// ignoring its cancellation (see KeepAlive).
type parentDeadline struct {
	context.Context
	parent context.Context
}

func (c parentDeadline) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// dropKeepAlive removes reg after its parent context is done, and then ends
// the context handed out with the parent's cause. The lease is left to
// expire unless another keep-alive remains.
func (s *Service) dropKeepAlive(id ID, reg *keepAliveReg) {
	s.mu.Lock()
	defer s.unlock()
	defer reg.cancel(context.Cause(reg.parent)) // a no-op if the lease's end came first
	e := s.leases.get(id)
	if s.closed || e == nil || !e.kept || !slices.Contains(e.ka().regs, reg) {
		return // already ended, or already dropped by settle
	}
	// The parent was done a moment ago: renewals that fell due before then
	// (a late timer, a clock whose timers had not run) still happen, so the
	// lease does not count as expired at an instant it was kept alive.
	reg.draining = true
	now := s.now()
	s.settle(now)
	reg.draining = false
	if e = s.leases.get(id); e == nil || !e.kept {
		return
	}
	ka := e.ka()
	ka.regs = slices.DeleteFunc(ka.regs, func(r *keepAliveReg) bool { return r == reg })
	if len(ka.regs) == 0 {
		old := ka.next
		e.setKA(nil)
		if e.state == stateActive {
			s.setDue(e, old)
		}
	}
	s.rearm(now)
}

// live drops the keep-alives whose parent context is done and reports
// whether any remain. Settle asks before every renewal, so a cancelled parent
// stops renewals at once, without waiting for its AfterFunc to run.
func (k *keepAlive) live() bool {
	k.regs = slices.DeleteFunc(k.regs, func(r *keepAliveReg) bool {
		if r.parent.Err() == nil || r.draining {
			return false
		}
		// Dropped here, before its parent-done callback: that callback
		// has nothing left to do, and the context handed out ends now.
		if r.stop != nil {
			r.stop()
		}
		r.cancel(context.Cause(r.parent))
		return true
	})
	return len(k.regs) > 0
}

// endKeepAlive cancels every keep-alive of e with cause.
func endKeepAlive(e *entry, cause error) {
	ka := e.ka()
	if ka == nil {
		return
	}
	for _, r := range ka.regs {
		if r.stop != nil {
			r.stop()
		}
		r.cancel(cause)
	}
	e.setKA(nil)
}
