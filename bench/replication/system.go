// Package replication measures a replicated lease service beside etcd: a
// 3-member etcd cluster embedded in the process (go.etcd.io/etcd/server/v3
// at its defaults, driven through go.etcd.io/etcd/client/v3), and a 3-node
// cluster of github.com/leasehold/lease/replicated over hashicorp/raft's TCP
// transport. Both run on 127.0.0.1, keep their data on disk in a temporary
// directory and sync it (the defaults of each), and every client talks to the
// leader.
//
// Each scenario runs on a fresh cluster, so one scenario's leftover leases
// never expire during another. The command in cmd/replication runs them and
// prints (or writes) a table of medians; Run is the same for tests.
package replication

import (
	"context"
	"time"
)

// system is one cluster under test. Its methods are called from many
// goroutines at once, except close, which is called once after every other
// call has returned.
type system interface {
	// grant creates a lease of ttl and returns it with its deadline as the
	// system reports it (or as the client can tell it).
	grant(ctx context.Context, ttl time.Duration) (grant, error)
	// grantKey creates a lease of ttl with key attached to it, in the
	// fewest calls the system has: one for ours (GrantWithKey), two for
	// etcd (Grant, then Put with the lease), which has no single call.
	grantKey(ctx context.Context, ttl time.Duration, key string, value []byte) (grant, error)
	// put attaches key to lease id, a call of its own.
	put(ctx context.Context, key string, value []byte, id int64) error
	revoke(ctx context.Context, id int64) error
	// exactTTL reports whether a grant's deadline is its TTL from the
	// instant the grant is applied, to the nanosecond; etcd's TTLs are
	// whole seconds.
	exactTTL() bool
	// renewers names the ways the system renews, each scenario (c) run
	// once per way.
	renewers() []renewer
	// watchEnds calls fn, perhaps from several goroutines, with the id and the
	// instant it was observed for each lease that ends by expiry from now
	// on, until stop is called. Leases must be granted with grantKey, their
	// keys under keyPrefix, for a system that observes ends through keys.
	watchEnds(ctx context.Context, keyPrefix string, fn func(id int64, at time.Time)) (stop func(), err error)
	close() error
}

// grant is a lease as the client sees it.
type grant struct {
	id       int64
	deadline time.Time
}

// renewer is one way of renewing. open prepares a client goroutine to renew
// lease id repeatedly: it returns the renewal, which reports the lease's new
// deadline, and a function to release what open took.
type renewer struct {
	name string
	open func(ctx context.Context, id int64) (renew func(context.Context) (time.Time, error), done func(), err error)
}

// starter opens a fresh cluster with its data under dir.
type starter func(ctx context.Context, dir string) (system, error)
