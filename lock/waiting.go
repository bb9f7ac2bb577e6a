package lock

import (
	"context"
	"strconv"
	"time"
)

// Waiting is one caller waiting for a lock, as a WaitInspector reports it.
// It is a plain value, safe to copy and share.
type Waiting struct {
	ExecutionID string
	// Since is when it started waiting, on the provider's clock.
	Since time.Time
}

// WaitInspector is implemented by a Provider that can say who waits for
// its locks: the callers of its AcquireWait, in the order they will be
// offered the lock. Callers that poll (Acquire, TryLock) are not waiting
// and are not listed. Its answers are snapshots. Implementations must be
// safe for concurrent use. Memory is a WaitInspector.
type WaitInspector interface {
	// Waiting returns the waiters for the lock name, longest waiting
	// first: at most limit of them when limit > 0, all of them when limit
	// is 0. A negative limit or a bad name is bad input.
	Waiting(ctx context.Context, name string, limit int) ([]Waiting, error)
}

var _ WaitInspector = (*Memory)(nil)

// Waiting returns the callers of this Memory's AcquireWait waiting for the
// lock name, longest waiting first; it makes Memory a WaitInspector.
// Waiters in other processes (or of other Memories on the same service)
// are not listed.
func (m *Memory) Waiting(ctx context.Context, name string, limit int) ([]Waiting, error) {
	const op = "waiting"
	switch {
	case ctx == nil:
		return nil, invalid(op, "ctx", "must not be nil")
	case name == "":
		return nil, invalid(op, "name", "must not be empty")
	case limit < 0:
		return nil, invalid(op, "limit", strconv.Itoa(limit)+" is negative")
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
