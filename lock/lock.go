package lock

import (
	"context"
	"time"
)

// Lease is one holding of a named lock: the Distributed Lock API's
// LockLease, plus a fencing token.
type Lease struct {
	Name        string
	ExecutionID string
	ExpiresAt   time.Time
	// Token is the fencing token of this acquisition: strictly greater than
	// every token issued earlier for the same name, and kept by Renew.
	Token uint64
}

// Provider stores locks. Implementations must be safe for concurrent use.
//
// Acquire returns a new Lease when the lock is unheld or its holder's lease
// has expired, and nil, nil when it is held (contention is not an error).
// Renew extends the given leases that are still held by them and returns
// only those, in input order. Release frees the given leases that are still
// held by them and is idempotent.
type Provider interface {
	Acquire(ctx context.Context, name, executionID string, d time.Duration) (*Lease, error)
	Renew(ctx context.Context, leases []Lease, d time.Duration) ([]Lease, error)
	Release(ctx context.Context, leases []Lease) error
}
