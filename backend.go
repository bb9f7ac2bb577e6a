package lease

import (
	"context"
	"time"
)

// Backend is the lease API that both a Service in this process and a
// replicated node (package replicated) offer, so that code written against
// it runs on either. Every call takes a context and every read returns an
// error: on a replicated node a read may cross the network and fail (no
// leader, the node closed, the context done), and the interface says so.
//
// A *Service is one, with the same methods. Errors are *Error values with
// the codes the Service returns; a replicated node adds its own for what
// only a network can do (see its package).
//
// Implementations are safe for concurrent use.
type Backend interface {
	// Grant creates a lease for holder and purpose that lives ttl unless
	// renewed.
	Grant(ctx context.Context, holder string, purpose Purpose, ttl time.Duration) (Lease, error)
	// GrantWithKey grants a lease and attaches key, with value, to it, at
	// once; LS_KEY_EXISTS when the key is present.
	GrantWithKey(ctx context.Context, holder string, purpose Purpose, ttl time.Duration, key string, value []byte) (Lease, error)
	// Renew restarts the lease's TTL from now.
	Renew(ctx context.Context, id ID) (Lease, error)
	// RenewTTL makes ttl the lease's TTL and restarts it from now.
	RenewTTL(ctx context.Context, id ID, ttl time.Duration) (Lease, error)
	// Revoke ends the lease and deletes its keys.
	Revoke(ctx context.Context, id ID) (Lease, error)
	// Use checks that the lease is active and was granted for purpose.
	Use(ctx context.Context, id ID, purpose Purpose) (Lease, error)
	// KeepAlive renews the lease every TTL/3 until ctx is done or the
	// lease ends; the returned context is done when either happens, and
	// context.Cause tells which.
	KeepAlive(ctx context.Context, id ID) (context.Context, error)
	// Info returns the lease if it is active, and the error Renew would
	// return otherwise.
	Info(ctx context.Context, id ID) (Lease, error)
	// List returns the active leases in ID order.
	List(ctx context.Context) ([]Lease, error)
	// Put stores value under key, attached to lease id (0 for none).
	Put(ctx context.Context, key string, value []byte, id ID) error
	// Get returns a copy of the value under key and the lease it is
	// attached to; ok is false when the key is absent.
	Get(ctx context.Context, key string) (value []byte, id ID, ok bool, err error)
	// Delete removes key and reports whether it was present.
	Delete(ctx context.Context, key string) (bool, error)
	// Scan returns the keys starting with prefix, in key order, at most
	// limit of them when limit > 0.
	Scan(ctx context.Context, prefix string, limit int) ([]KeyValue, error)
	// OnEnd subscribes fn to the endings of leases, expired or revoked;
	// stop unsubscribes it.
	OnEnd(fn func(l Lease, reason EndReason)) (stop func())
}

// A Service is a Backend.
var _ Backend = (*Service)(nil)
