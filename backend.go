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
// A Service satisfies it through AsBackend, which keeps the Service's own
// read methods (Info, Get, List, Scan without a context or error) unchanged.
// Errors are *Error values with the codes the Service returns; a replicated
// node adds its own for what only a network can do (see its package).
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

// AsBackend returns s as a Backend. Its writes, Use, KeepAlive and OnEnd are
// the Service's own; its reads are the Service's behind a context check, and
// after Close they fail with LS_CLOSED (where the Service's Get, List and
// Scan answer empty). Closing s is the caller's business.
func AsBackend(s *Service) Backend { return serviceBackend{s} }

// serviceBackend adapts a Service: the read methods declared here shadow the
// Service's, and the rest are promoted from it.
type serviceBackend struct{ *Service }

// ready reports why a read cannot be served: a done ctx or a closed Service.
func (b serviceBackend) ready(ctx context.Context, op string) error {
	if ctx == nil {
		return &Error{Code: CodeInvalidArgument, Op: op, Field: "ctx", Detail: "must not be nil"}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.closed(op)
}

func (b serviceBackend) closed(op string) error {
	select {
	case <-b.Done():
		return &Error{Code: CodeClosed, Op: op}
	default:
		return nil
	}
}

func (b serviceBackend) Info(ctx context.Context, id ID) (Lease, error) {
	if err := b.ready(ctx, "info"); err != nil {
		return Lease{}, err
	}
	return b.Service.Info(id)
}

func (b serviceBackend) List(ctx context.Context) ([]Lease, error) {
	if err := b.ready(ctx, "list"); err != nil {
		return nil, err
	}
	l := b.Service.List()
	if err := b.closed("list"); err != nil {
		return nil, err // closed meanwhile: the empty answer is not the state
	}
	return l, nil
}

func (b serviceBackend) Get(ctx context.Context, key string) ([]byte, ID, bool, error) {
	if err := b.ready(ctx, "get"); err != nil {
		return nil, 0, false, err
	}
	v, id, ok := b.Service.Get(key)
	if err := b.closed("get"); err != nil {
		return nil, 0, false, err
	}
	return v, id, ok, nil
}

func (b serviceBackend) Scan(ctx context.Context, prefix string, limit int) ([]KeyValue, error) {
	if err := b.ready(ctx, "scan"); err != nil {
		return nil, err
	}
	kvs := b.Service.Scan(prefix, limit)
	if err := b.closed("scan"); err != nil {
		return nil, err
	}
	return kvs, nil
}
