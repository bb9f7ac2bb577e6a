package lock

import (
	"context"

	"github.com/leasehold/lease/lock/lockprovider"
)

// Holder returns who holds the lock name, read from the lock's key and its
// lease; it makes Memory a lockprovider.Inspector. On a closed service it fails with an
// error matching lease.ErrClosed.
func (m *Memory) Holder(ctx context.Context, name string) (Holding, bool, error) {
	if err := lockprovider.CheckHolder(ctx, name); err != nil {
		return Holding{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return Holding{}, false, err
	}
	h, ok, err := m.locks.Holder(ctx, name)
	return Holding(h), ok, err
}

// Held returns the locks held whose names start with prefix, in name order,
// from one scan of the service's keys; it makes Memory a
// lockprovider.Inspector. A lock
// whose lease ends between the scan and the lookup of its expiry is left
// out, so fewer than limit may come back while more are held. On a closed
// service it fails with an error matching lease.ErrClosed.
func (m *Memory) Held(ctx context.Context, prefix string, limit int) ([]Holding, error) {
	if err := lockprovider.CheckHeld(ctx, limit); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	hs, err := m.locks.Held(ctx, prefix, limit)
	if err != nil {
		return nil, err
	}
	var out []Holding
	for _, h := range hs {
		out = append(out, Holding(h))
	}
	return out, nil
}
