package lease

// Start an operation: refuse a closed service, settle what is due, find the
// lease, and record the decision.

import (
	"context"
	"math"
)

// begin starts an operation under the lock: it refuses a closed service,
// reads the clock once and settles everything due.
func (s *Service) begin(op string, id ID) (int64, error) {
	if s.closed {
		return 0, newError(CodeClosed, op, id)
	}
	now := s.now()
	s.settle(now)
	return now, nil
}

// beginOne is begin for a call that reads one lease and changes nothing
// (Use, Info). If that lease is active and not due, nothing the rest of the
// backlog settles can change its answer, so the call answers at once
// instead of settling others' expiries first: during a burst it does not
// wait for the burst. Otherwise it settles everything due, like begin.
func (s *Service) beginOne(op string, id ID) (int64, error) {
	if s.closed {
		return 0, newError(CodeClosed, op, id)
	}
	now := s.now()
	if e := s.leases.get(id); e == nil || e.state != stateActive || e.due() <= now {
		s.settle(now)
	}
	return now, nil
}

// leaseOp is an operation on one active lease, started by openLease.
type leaseOp struct {
	e     *entry
	now   int64
	trace string
}

// openLease starts an operation on lease id: it checks ctx, takes the lock,
// settles what is due and finds the lease. On success the lock is held and
// the caller releases it with s.unlock. Use (stale true) changes nothing and
// settles only if its own lease is due (beginOne). A lease that is not active is
// refused: the refusal is audited under action and the lock released.
func (s *Service) openLease(ctx context.Context, op string, action Action, refused string, id ID, stale bool) (leaseOp, error) {
	if err := checkContext(ctx, op, id); err != nil {
		return leaseOp{}, err
	}
	trace := s.traceID(ctx)
	s.mu.Lock()
	var now int64
	var err error
	if stale {
		now, err = s.beginOne(op, id)
	} else {
		now, err = s.begin(op, id)
	}
	if err != nil {
		s.unlock()
		return leaseOp{}, err
	}
	e, lerr := s.lookup(op, id, stale)
	if lerr != nil {
		s.decide(trace, now, action, e, id, lerr, refused)
		s.unlock()
		return leaseOp{}, lerr
	}
	return leaseOp{e, now, trace}, nil
}

// lookup finds an active lease or returns the error the operation table
// gives for its state. For Use (stale true) every ended state is stale use.
func (s *Service) lookup(op string, id ID, stale bool) (*entry, *Error) {
	e := s.leases.get(id)
	var code Code
	var reason EndReason
	switch {
	case e != nil && e.state == stateActive:
		return e, nil
	case e != nil && e.state == stateRevoked:
		code, reason = CodeAlreadyRevoked, EndRevoked
	case e != nil || (id != 0 && id <= s.lastID):
		code, reason = CodeExpired, EndExpired // expired, or ended and no longer remembered
	default:
		return nil, newError(CodeNotFound, op, id)
	}
	if stale {
		code = CodeStaleUse
	}
	return e, endedError(code, op, id, reason)
}

// settle expires or keep-alive-renews every lease due at or before now, in
// deadline order.
func (s *Service) settle(now int64) { s.settleSome(now, math.MaxInt) }

// settleSome settles like settle but stops once it has done budget units of
// work (see fireWork) and reports whether any due remain.
func (s *Service) settleSome(now int64, budget int) (more bool) {
	for s.heap.Len() > 0 && s.heap.At(0).Key <= now {
		if budget <= 0 {
			return true
		}
		e := s.heap.At(0).Val
		if e.kept && e.ka().next <= now && !e.ka().live() {
			e.setKA(nil) // every keep-alive's parent is done: left to expire
		}
		if due := e.due(); s.heap.At(0).Key < due {
			// Surfaced early after a renewal: re-key and look again.
			s.heap.At(0).Key = due
			s.heap.Fix(0)
			continue
		}
		budget -= endWork(e)
		if e.kept && e.ka().next <= now {
			// Renewed at the instant it was due, like an expiry is decided
			// at its deadline: a late timer or a stalled process changes
			// nothing, and decisions stay in time order. After a stall
			// spanning many renewals only the last one is made: each would
			// have landed before the lease expired, so the last decides
			// the state, and the catch-up costs one renewal, not one per
			// missed interval.
			at, trace := e.ka().next, e.ka().regs[0].traceID
			if every := keepAliveInterval(e.ttl); now-at >= every {
				at += (now - at) / every * every
			}
			s.renew(e, at, e.ttl)
			s.decide(trace, at, ActionRenew, e, e.id, nil, "renewed by keep-alive")
			continue
		}
		s.end(e, e.expires(), EndExpired, "")
	}
	return false
}

// decide records an audit decision and queues it for the sink.
func (s *Service) decide(trace string, at int64, action Action, e *entry, id ID, err *Error, reason string) {
	if s.opts.observer != nil && (err != nil || action != ActionUse) && s.observes(action, err) {
		s.observe(at, action, e, id, err)
	}
	sink := s.opts.auditSink != nil
	var scratch auditRecord
	rec := &scratch
	if r := s.audit.claim(); r != nil {
		rec = r // written in place: this runs on every Use
	} else if !sink {
		return
	}
	*rec = auditRecord{id: id, action: action, reason: reason, trace: trace, at: at, revision: s.revision, err: err}
	if e != nil {
		rec.holder = e.holder()
	}
	if sink {
		s.queueDecision(rec.decision(s.base))
	}
}

func checkContext(ctx context.Context, op string, id ID) error {
	if ctx == nil {
		return invalidArgument("ctx", op, id, "must not be nil")
	}
	return ctx.Err()
}
