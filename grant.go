package lease

// Grant a lease: the grant calls and their argument checks.

import (
	"context"
	"time"
)

// Grant creates a lease for holder with the given purpose and TTL. holder
// must not be empty nor longer than 4 GiB, purpose must be valid and ttl
// positive and within the service's TTL bounds; otherwise it returns
// LS_INVALID_ARGUMENT naming the field and nothing changes.
func (s *Service) Grant(ctx context.Context, holder string, purpose Purpose, ttl time.Duration) (Lease, error) {
	return s.grant(ctx, "grant", holder, purpose, ttl, "", nil)
}

// GrantWithKey grants a lease like Grant and attaches key to it with value,
// atomically, only if key is absent. If key is present (attached to a live
// lease or to none) it returns an error matching ErrKeyExists whose LeaseID
// is the lease holding key (0 for none), and nothing changes. It is the
// create-if-absent primitive that exclusive locks are built on.
func (s *Service) GrantWithKey(ctx context.Context, holder string, purpose Purpose, ttl time.Duration, key string, value []byte) (Lease, error) {
	if key == "" {
		return Lease{}, invalidArgument("key", "grant", 0, "must not be empty")
	}
	return s.grant(ctx, "grant", holder, purpose, ttl, key, value)
}

func (s *Service) grant(ctx context.Context, op, holder string, purpose Purpose, ttl time.Duration, key string, value []byte) (Lease, error) {
	if err := checkContext(ctx, op, 0); err != nil {
		return Lease{}, err
	}
	if err := s.checkGrant(op, holder, purpose, ttl); err != nil {
		return Lease{}, err
	}
	trace := s.traceID(ctx)
	if key != "" {
		value = cloneBytes(value)
	}
	s.mu.Lock()
	defer s.unlock()
	now, err := s.begin(op, 0)
	if err != nil {
		return Lease{}, err
	}
	if key != "" {
		if it, found := s.keys.get(key); found {
			err := &Error{Code: CodeKeyExists, Op: op, LeaseID: it.lease, Key: key}
			s.decide(trace, now, ActionGrant, nil, 0, err, "key exists")
			return Lease{}, err
		}
	}
	s.lastID++
	s.revision++
	e := s.leases.add(s.lastID)
	*e = entry{
		id:       s.lastID,
		revision: s.revision,
		purpose:  purpose,
	}
	e.setHolder(holder)
	s.setTimes(e, now, int64(ttl))
	e.granted = now
	s.heap.Push(e.expires(), uint64(e.id), e)
	if key != "" {
		s.keys.put(key, value, e.id)
		e.keys = 1
	}
	s.decide(trace, now, ActionGrant, e, e.id, nil, "granted")
	s.counted(purpose).granted++
	s.rearm(now)
	return s.snapshot(e), nil
}

func (s *Service) checkGrant(op, holder string, purpose Purpose, ttl time.Duration) error {
	switch {
	case holder == "":
		return invalidArgument("holder", op, 0, "must not be empty")
	case uint64(len(holder)) > maxHolderLen:
		return invalidArgument("holder", op, 0, "is longer than 4 GiB")
	case !purpose.Valid():
		return invalidArgument("purpose", op, 0, purpose.String()+" is not a valid purpose")
	}
	if err := s.checkTTL(op, 0, ttl); err != nil {
		return err
	}
	return nil
}

func (s *Service) checkTTL(op string, id ID, ttl time.Duration) *Error {
	switch {
	case ttl <= 0:
		return invalidArgument("ttl", op, id, ttl.String()+" is not positive")
	case ttl < s.opts.minTTL || ttl > s.opts.maxTTL:
		return invalidArgument("ttl", op, id, ttl.String()+" is outside ["+s.opts.minTTL.String()+", "+s.opts.maxTTL.String()+"]")
	}
	return nil
}
