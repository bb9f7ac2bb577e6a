package keylock

import (
	"context"
	"strings"

	"github.com/leasehold/lease"
)

// Holder returns who holds the lock name, read from the lock's key and its
// lease, and false if nobody does.
func (m *Locks) Holder(ctx context.Context, name string) (Holding, bool, error) {
	const op = "holder"
	value, id, ok, err := m.b.Get(ctx, m.prefix+name)
	if err != nil {
		return Holding{}, false, m.voice(op, err)
	}
	if !ok {
		return Holding{}, false, nil
	}
	return m.inspect(ctx, op, name, value, id)
}

// Held returns the locks held whose names start with prefix, in name order,
// from one scan of the backend's keys: at most limit of them when limit >
// 0. A lock whose lease ends between the scan and the lookup of its expiry
// is left out.
func (m *Locks) Held(ctx context.Context, prefix string, limit int) ([]Holding, error) {
	const op = "held"
	kvs, err := m.b.Scan(ctx, m.prefix+prefix, limit)
	if err != nil {
		return nil, m.voice(op, err)
	}
	var out []Holding
	for _, kv := range kvs {
		h, ok, err := m.inspect(ctx, op, strings.TrimPrefix(kv.Key, m.prefix), kv.Value, kv.LeaseID)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, h)
		}
	}
	return out, nil
}

// inspect makes the holding of a lock key's value (the backend's copy) and
// lease, if the key is a lock's and its lease still active.
func (m *Locks) inspect(ctx context.Context, op, name string, value []byte, id lease.ID) (Holding, bool, error) {
	if id == 0 {
		return Holding{}, false, nil
	}
	exec, v, ok := decodeValue(value)
	if !ok {
		return Holding{}, false, nil
	}
	l, err := m.b.Info(ctx, id)
	switch {
	case ended(err):
		return Holding{}, false, nil
	case err != nil:
		return Holding{}, false, m.voice(op, err)
	}
	return Holding{Name: name, ExecutionID: exec, Token: uint64(id), ExpiresAt: l.ExpiresAt, Value: v}, true, nil
}

// Waiting returns the callers of AcquireWait waiting for the lock name,
// longest waiting first: at most limit of them when limit > 0.
func (m *Locks) Waiting(name string, limit int) ([]Waiting, error) {
	const op = "waiting"
	q := &m.waits
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.byName[name]
	if l == nil {
		return nil, m.open(op)
	}
	out := make([]Waiting, 0, l.Len())
	for e := l.Front(); e != nil && (limit == 0 || len(out) < limit); e = e.Next() {
		w := e.Value.(*waiter)
		out = append(out, Waiting{ExecutionID: w.executionID, Since: w.since})
	}
	return out, m.open(op)
}
