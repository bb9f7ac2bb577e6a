package lock

import (
	"context"

	"github.com/leasehold/lease/lock/lockprovider"
)

// Waiting returns the callers of this Memory's AcquireWait waiting for the
// lock name, longest waiting first; it makes Memory a lockprovider.WaitInspector.
// Waiters in other processes (or of other Memories on the same service)
// are not listed.
func (m *Memory) Waiting(ctx context.Context, name string, limit int) ([]Waiting, error) {
	if err := lockprovider.CheckWaiting(ctx, name, limit); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ws, err := m.locks.Waiting(name, limit)
	if ws == nil {
		return nil, err
	}
	out := make([]Waiting, len(ws))
	for i, w := range ws {
		out[i] = Waiting(w)
	}
	return out, err
}
