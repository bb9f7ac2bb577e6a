package lease

import "context"

// Put stores value under key. With id 0 the key belongs to no lease (and is
// detached from any lease it had); otherwise id must be active and the key
// is attached to it, moving from any other lease: a key has at most one
// lease. An ended or unknown lease gets the error Renew would give and
// nothing changes. value is copied.
func (s *Service) Put(ctx context.Context, key string, value []byte, id ID) error {
	if err := checkContext(ctx, "put", id); err != nil {
		return err
	}
	if key == "" {
		return invalidArgument("key", "put", id, "must not be empty")
	}
	value = cloneBytes(value)
	s.mu.Lock()
	defer s.unlock()
	if _, err := s.begin("put", id); err != nil {
		return err
	}
	var e *entry
	if id != 0 {
		var lerr *Error
		if e, lerr = s.lookup("put", id, false); lerr != nil {
			lerr.Key = key
			return lerr
		}
	}
	if prev := s.keys.put(key, value, id); prev != id {
		s.detached(prev)
		if e != nil {
			e.keys++
		}
	}
	s.revision++
	return nil
}

// Get returns a copy of the value under key and the lease it is attached
// to (0 for none); ok is false when the key is absent. A key of an expired
// lease is never returned. A done ctx gets its error, a closed service
// LS_CLOSED.
func (s *Service) Get(ctx context.Context, key string) (value []byte, id ID, ok bool, err error) {
	if err := checkContext(ctx, "get", 0); err != nil {
		return nil, 0, false, err
	}
	s.mu.Lock()
	defer s.unlock()
	if _, err := s.begin("get", 0); err != nil {
		return nil, 0, false, err
	}
	it, ok := s.keys.get(key)
	if !ok {
		return nil, 0, false, nil
	}
	return cloneBytes(it.value), it.lease, true, nil
}

// Delete removes key and reports whether it was present.
func (s *Service) Delete(ctx context.Context, key string) (bool, error) {
	if err := checkContext(ctx, "delete", 0); err != nil {
		return false, err
	}
	if key == "" {
		return false, invalidArgument("key", "delete", 0, "must not be empty")
	}
	s.mu.Lock()
	defer s.unlock()
	if _, err := s.begin("delete", 0); err != nil {
		return false, err
	}
	it, found := s.keys.delete(key)
	if !found {
		return false, nil
	}
	s.detached(it.lease)
	s.revision++
	return true, nil
}

// Scan returns the keys that start with prefix, in key order, with copies of
// their values: at most limit of them when limit > 0, all when limit <= 0.
// An empty prefix scans every key. A done ctx gets its error, a closed
// service LS_CLOSED.
func (s *Service) Scan(ctx context.Context, prefix string, limit int) ([]KeyValue, error) {
	if err := checkContext(ctx, "scan", 0); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.unlock()
	if _, err := s.begin("scan", 0); err != nil {
		return nil, err
	}
	return s.keys.scan(prefix, limit), nil
}

// detached updates the key count of the lease a key left.
func (s *Service) detached(id ID) {
	if id == 0 {
		return
	}
	if e := s.leases.get(id); e != nil {
		e.keys--
	}
}
