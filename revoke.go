package lease

// End a lease: Revoke, and the ending every expiry and revocation goes
// through.

import (
	"context"
)

// Revoke ends an active lease and deletes its keys atomically. The returned
// Lease's Keys are exactly the keys deleted.
func (s *Service) Revoke(ctx context.Context, id ID) (Lease, error) {
	op, err := s.openLease(ctx, "revoke", ActionRevoke, "revoke refused", id, false)
	if err != nil {
		return Lease{}, err
	}
	defer s.unlock()
	l := s.end(op.e, op.now, EndRevoked, op.trace)
	s.rearm(op.now)
	return l, nil
}

// end removes a live lease with its keys, remembers how it ended, records
// the decision and queues the notifications. at is the decision time: the
// expiry instant for an expiry.
func (s *Service) end(e *entry, at int64, reason EndReason, trace string) Lease {
	s.heap.Remove(int(e.index))
	wanted := s.wantsEnd()
	var deleted []string
	if e.keys > 0 {
		// The deleted keys are wanted by Revoke's caller and by listeners;
		// an expiry nobody listens to need not collect them.
		deleted = s.keys.deleteLease(e.id, int(e.keys), reason == EndRevoked || wanted)
		e.keys = 0
	}
	s.revision++
	action, code := ActionExpire, CodeExpired
	e.state = stateExpired
	if reason == EndRevoked {
		action, code = ActionRevoke, CodeAlreadyRevoked
		e.state = stateRevoked
	}
	if e.kept {
		endKeepAlive(e, endedError(code, "keepalive", e.id, reason))
	}
	evicted := s.ended.add(e)
	s.countEnd(e.purpose, reason)
	reasonText := "revoked"
	if reason == EndExpired {
		reasonText = "expired"
	}
	s.decide(trace, at, action, e, e.id, nil, reasonText)
	l := s.snapshot(e)
	l.Keys = deleted
	if wanted {
		ev := l
		if reason == EndRevoked {
			ev = ownKeys(l) // the caller of Revoke gets deleted; the event needs its own
		}
		s.outbox = append(s.outbox, event{kind: eventEnd, lease: ev, reason: reason, subs: s.subs})
	}
	if evicted != nil {
		// Last: deleting from the table may move entries, e among them.
		s.leases.delete(evicted.id)
	}
	return l
}
