package lease

// Renew a lease: the renew calls and the bookkeeping of a lease's times.

import (
	"context"
	"time"
)

// Renew extends an active lease to now+TTL. An expired lease gets
// LS_EXPIRED, a revoked one LS_ALREADY_REVOKED, an ID never issued
// LS_NOT_FOUND; renewing an ended lease is never allowed.
func (s *Service) Renew(ctx context.Context, id ID) (Lease, error) {
	return s.renewOp(ctx, id, 0)
}

// RenewTTL is Renew with a new TTL: the lease's TTL becomes ttl and it
// expires at now+ttl. ttl is checked like Grant's.
func (s *Service) RenewTTL(ctx context.Context, id ID, ttl time.Duration) (Lease, error) {
	if err := s.checkTTL("renew", id, ttl); err != nil {
		return Lease{}, err
	}
	return s.renewOp(ctx, id, ttl)
}

func (s *Service) renewOp(ctx context.Context, id ID, ttl time.Duration) (Lease, error) {
	op, err := s.openLease(ctx, "renew", ActionRenew, "renew refused", id, false)
	if err != nil {
		return Lease{}, err
	}
	defer s.unlock()
	if ttl == 0 {
		ttl = time.Duration(op.e.ttl)
	}
	s.renew(op.e, op.now, int64(ttl))
	s.decide(op.trace, op.now, ActionRenew, op.e, id, nil, "renewed")
	s.rearm(op.now)
	return s.snapshot(op.e), nil
}

// renew extends a live lease from now.
func (s *Service) renew(e *entry, now, ttl int64) {
	old := e.due()
	s.revision++
	s.setTimes(e, now, ttl)
	if e.kept {
		e.ka().next = addSat(now, keepAliveInterval(ttl))
	}
	s.setDue(e, old)
	s.counted(e.purpose).renewed++
}

// setTimes records a grant or renewal at now for ttl.
func (s *Service) setTimes(e *entry, now, ttl int64) {
	e.ttl = ttl
	e.renewed = now
}

// setDue moves e's heap slot after its deadline changed from old. A later
// deadline leaves the heap alone (settle re-keys the slot when it
// surfaces); only an earlier one must move the slot up now.
func (s *Service) setDue(e *entry, old int64) {
	// slot key <= old, so a deadline that did not move earlier needs no
	// look at the slot at all (which, with a million leases, is a cache miss).
	if i, due := int(e.index), e.due(); due < old && due < s.heap.At(i).Key {
		s.heap.At(i).Key = due
		s.heap.Fix(i)
	}
}
