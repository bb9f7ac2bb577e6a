package lockprovider

import (
	"context"
	"time"
)

// Lease is one holding of a named lock: who holds it (ExecutionID), until
// when, and its fencing token. It is a plain value, safe to copy and share;
// a Provider identifies a holding by all of Name, ExecutionID and Token.
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

// Provider stores locks: the one interface every lock provider implements.
// Implementations must be safe for concurrent use and keep this contract,
// which package lock/locktest checks:
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
//     provider checks it, first, with the Check functions or a Checker of
//     this package: a lock.Manager passes its input through unchecked.
type Provider interface {
	Acquire(ctx context.Context, name, executionID string, d time.Duration) (*Lease, error)
	Renew(ctx context.Context, leases []Lease, d time.Duration) ([]Lease, error)
	Release(ctx context.Context, leases []Lease) error
}

// MaxValueSize is the largest value a holder may attach to a holding
// (lock.WithValue, ValueAcquirer): a few hundred bytes of identity or
// address for whoever asks who holds a lock, not a payload.
const MaxValueSize = 1024

// Holding is who holds a lock, as an Inspector reports it. It is a plain
// value; its Value is the caller's own copy.
type Holding struct {
	Name        string
	ExecutionID string
	Token       uint64
	// ExpiresAt is when the holding's lease ends unless renewed, on the
	// provider's clock.
	ExpiresAt time.Time
	// Value is what the holder attached (lock.WithValue, ValueAcquirer);
	// nil for none.
	Value []byte
}

// Waiting is one caller waiting for a lock, as a WaitInspector reports it.
// It is a plain value, safe to copy and share.
type Waiting struct {
	ExecutionID string
	// Since is when it started waiting, on the provider's clock.
	Since time.Time
}
