package election

import (
	"context"
	"strconv"
	"time"

	"github.com/leasehold/lease/lock/lockprovider"
)

// Candidate is a campaign waiting to lead, as Candidates reports it. It is
// a plain value; Value is the caller's own copy.
type Candidate struct {
	// Value is what the candidate attached to its campaign; nil for none.
	Value []byte
	// Since is when it started waiting, on the provider's clock.
	Since time.Time
}

// Candidates returns the campaigns waiting for the leadership, next in line
// first: at most limit of them when limit > 0, all when 0. It needs a
// provider that is a lockprovider.WaitInspector (lock.Memory is) and lists the
// candidates that provider knows of: for lock.Memory, those of the
// process. Another provider gets an error matching
// lease.ErrInvalidArgument naming "provider".
func (e *Election) Candidates(ctx context.Context, limit int) ([]Candidate, error) {
	const op = "candidates"
	if ctx == nil {
		return nil, invalid(op, "ctx", "must not be nil")
	}
	if limit < 0 {
		return nil, invalid(op, "limit", strconv.Itoa(limit)+" is negative")
	}
	w, ok := e.provider.(lockprovider.WaitInspector)
	if !ok {
		return nil, invalid(op, "provider", "cannot list waiters (not a lockprovider.WaitInspector)")
	}
	waiting, err := w.Waiting(ctx, e.name, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Candidate, len(waiting))
	for i, x := range waiting {
		out[i] = Candidate{Value: valueOf(x.ExecutionID), Since: x.Since}
	}
	return out, nil
}
