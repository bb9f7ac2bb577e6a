package lock

import (
	"context"
	"time"

	"github.com/leasehold/lease"
)

// Lease is one holding of a named lock: who holds it (ExecutionID), until
// when, and its fencing token. It is a plain value, safe to copy and share; a Provider identifies a holding by all of Name, ExecutionID and
// Token.
type Lease struct {
	Name        string
	ExecutionID string
	// ExpiresAt is when the lease ends unless renewed, on the provider's
	// clock (which, for a remote provider, is not the caller's).
	ExpiresAt time.Time
	// Token is the fencing token of this acquisition: strictly greater than
	// every token issued earlier for the same name, and kept by Renew. It is
	// never 0.
	Token uint64
}

// Provider stores locks. Implementations must be safe for concurrent use and
// keep this contract, which package locktest checks:
//
//   - Acquire returns a new Lease when the lock is unheld or its holder's
//     lease has expired, and nil, nil when it is held by anyone, the same
//     executionID included: contention is not an error. Under any
//     interleaving at most one execution holds a name at a time. A failure of
//     the provider is an error.
//   - Each successful Acquire of a name returns a Token strictly greater than
//     every token issued earlier for that name. Renew keeps the token.
//   - Renew extends to now+d the leases that are known, still held by that
//     ExecutionID and Token, and unexpired; it silently skips the rest and
//     returns the renewed ones, with their new ExpiresAt, in input order.
//   - Release frees the leases still held by that ExecutionID and Token and
//     ignores the rest: it is idempotent, and never frees a lock another
//     execution now holds. It may race with Renew.
//   - Bad input (a nil context, an empty name or executionID, d <= 0) is an
//     error matching lease.ErrInvalidArgument, and nothing changes. The
//     Check functions of this package make those errors.
type Provider interface {
	Acquire(ctx context.Context, name, executionID string, d time.Duration) (*Lease, error)
	Renew(ctx context.Context, leases []Lease, d time.Duration) ([]Lease, error)
	Release(ctx context.Context, leases []Lease) error
}

// TimeBase is implemented by a Provider whose leases expire on a clock of
// this process, such as Memory, whose leases expire on its service's time.
// A Manager over such a provider reads time from it, so that it counts
// renewals and safety deadlines on the very time the leases expire on, and
// NewManager refuses lease.WithClock for it. A provider that wraps one should
// implement TimeBase too, by forwarding (embedding *Memory does). Clock
// may be called from any goroutine.
type TimeBase interface {
	// Clock returns the provider's time base: a lease.Clock whose Now never
	// runs backwards, such as a lease.Service's Clock.
	Clock() lease.Clock
}
