package lock

import (
	"context"
	"time"

	"github.com/leasehold/lease/internal/lockkit"
)

// Holding is who holds a lock, as an Inspector reports it. It is a plain
// value; its Value is the caller's own copy.
type Holding struct {
	Name        string
	ExecutionID string
	Token       uint64
	// ExpiresAt is when the holding's lease ends unless renewed, on the
	// provider's clock.
	ExpiresAt time.Time
	// Value is what the holder attached (WithValue, ValueAcquirer); nil for
	// none.
	Value []byte
}

// Inspector is implemented by a Provider that can say who holds its locks.
// Its answers are snapshots: a lock may change hands as soon as they are
// given. Implementations must be safe for concurrent use.
type Inspector interface {
	// Holder returns the holding of the lock name, and false if it is not
	// held (or its lease has expired).
	Holder(ctx context.Context, name string) (Holding, bool, error)
	// Held returns the holdings of the locks whose names start with prefix
	// (every lock for ""), in name order: at most limit of them when
	// limit > 0, all of them when limit is 0. A negative limit is bad input.
	// The slice and its Values are the caller's.
	Held(ctx context.Context, prefix string, limit int) ([]Holding, error)
}

// Holder returns who holds the lock name, read from the lock's key and its
// lease; it makes Memory an Inspector. On a closed service it fails with an
// error matching lease.ErrClosed.
func (m *Memory) Holder(ctx context.Context, name string) (Holding, bool, error) {
	if err := lockkit.CheckHolder(ctx, name); err != nil {
		return Holding{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return Holding{}, false, err
	}
	h, ok, err := m.locks.Holder(ctx, name)
	return Holding(h), ok, err
}

// Held returns the locks held whose names start with prefix, in name order,
// from one scan of the service's keys; it makes Memory an Inspector. A lock
// whose lease ends between the scan and the lookup of its expiry is left
// out, so fewer than limit may come back while more are held. On a closed
// service it fails with an error matching lease.ErrClosed.
func (m *Memory) Held(ctx context.Context, prefix string, limit int) ([]Holding, error) {
	if err := lockkit.CheckHeld(ctx, limit); err != nil {
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
