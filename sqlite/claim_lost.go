package sqlite

import (
	"fmt"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// track records the Lost function of claims.
func (s *ClaimStore) track(claims []claim.Claim, fn func(claim.Ref, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.d.closed.Load() {
		return
	}
	for _, c := range claims {
		s.lost[c.Ref] = lostClaim{fn: fn, expires: c.ExpiresAt.UnixNano()}
	}
	if len(s.lost) >= 2*s.lostPrune {
		now := s.d.now()
		for r, l := range s.lost {
			if l.expires <= now {
				delete(s.lost, r)
			}
		}
		s.lostPrune = max(64, len(s.lost))
	}
}

func (s *ClaimStore) untrack(r claim.Ref) {
	s.mu.Lock()
	delete(s.lost, r)
	s.mu.Unlock()
}

func (s *ClaimStore) retrack(r claim.Ref, expires int64) {
	s.mu.Lock()
	if l, ok := s.lost[r]; ok {
		l.expires = expires
		s.lost[r] = l
	}
	s.mu.Unlock()
}

// lose calls, once, the Lost function of r, a claim ended by Cancel.
func (s *ClaimStore) lose(r claim.Ref, op string) {
	s.mu.Lock()
	l, ok := s.lost[r]
	if !ok || s.d.closed.Load() {
		s.mu.Unlock()
		return
	}
	delete(s.lost, r)
	s.callbacks.Add(1)
	s.mu.Unlock()
	defer s.callbacks.Done()
	l.fn(r, fmt.Errorf("%w: %w", staleClaim(op, r), claim.ErrCancelled))
}

func staleClaim(op string, r claim.Ref) *lease.Error { return checks.StaleClaim("claims."+op, r) }
