package lease

// Read leases: Use, Info, List and the counters; none changes a lease.

import (
	"context"
)

// Use checks that the lease is active and was granted for purpose, and
// returns it. An ended lease gets LS_STALE_USE, another purpose
// LS_PURPOSE_MISMATCH (with Expected and Actual set on the *Error). Use
// changes no lease, key or revision; like every operation on a lease it
// records its decision in the audit trail. It does not allocate unless the
// lease has keys. A Use on a lease that is not due answers without settling
// other leases' expiries first, so it does not wait for a burst of them; its
// decision may then precede expiry decisions with an earlier time in the
// audit trail.
func (s *Service) Use(ctx context.Context, id ID, purpose Purpose) (Lease, error) {
	if !purpose.Valid() {
		return Lease{}, invalidArgument("purpose", "use", id, purpose.String()+" is not a valid purpose")
	}
	op, err := s.openLease(ctx, "use", ActionUse, "use refused", id, true)
	if err != nil {
		return Lease{}, err
	}
	defer s.unlock()
	if op.e.purpose != purpose {
		err := &Error{Code: CodePurposeMismatch, Op: "use", LeaseID: id, Expected: purpose, Actual: op.e.purpose}
		s.decide(op.trace, op.now, ActionUse, op.e, id, err, "use refused")
		return Lease{}, err
	}
	s.decide(op.trace, op.now, ActionUse, op.e, id, nil, "used")
	return s.snapshot(op.e), nil
}

// Info returns the lease if it is active, and the error Renew would return
// otherwise. Like Use, it does not wait for other leases' expiries when its
// lease is not due. A done ctx gets its error, a closed service LS_CLOSED.
func (s *Service) Info(ctx context.Context, id ID) (Lease, error) {
	if err := checkContext(ctx, "info", id); err != nil {
		return Lease{}, err
	}
	s.mu.Lock()
	defer s.unlock()
	if _, err := s.beginOne("info", id); err != nil {
		return Lease{}, err
	}
	e, lerr := s.lookup("info", id, false)
	if lerr != nil {
		return Lease{}, lerr
	}
	return s.snapshot(e), nil
}

// List returns the active leases ordered by ID. A done ctx gets its error,
// a closed service LS_CLOSED.
func (s *Service) List(ctx context.Context) ([]Lease, error) {
	return s.list(ctx, 0, -1)
}

// ActiveCount returns the number of active leases (0 after Close).
func (s *Service) ActiveCount() int {
	s.mu.Lock()
	defer s.unlock()
	if _, err := s.begin("count", 0); err != nil {
		return 0
	}
	return s.heap.Len()
}

// Revision returns the service revision: a counter that grows on every state
// change (grant, renew, revoke, expire, put, delete).
func (s *Service) Revision() int64 {
	s.mu.Lock()
	defer s.unlock()
	_, _ = s.begin("revision", 0) // settles what is due; a closed service keeps its last revision
	return s.revision
}

// Audit returns the retained decisions, oldest first. The slice is a copy.
func (s *Service) Audit() []Decision {
	s.mu.Lock()
	defer s.unlock()
	_, _ = s.begin("audit", 0) // settles what is due; a closed service keeps its trail
	return s.audit.snapshot(s.base)
}
