// Package replicated runs a lease service on a cluster of nodes kept in
// agreement by hashicorp/raft, so that losing a node loses no lease or key.
//
// Every change is a raft log entry stamped with the leader's time, and every
// node applies the same entries to its own lease.Service at those instants.
// The leader decides expiries: at the earliest deadline it commits an entry
// carrying that instant, and every node ends the same leases when it applies
// it. A new leader starts from the last committed instant, so the service's
// time never runs backwards across a failover.
package replicated

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/raft"

	"github.com/leasehold/lease"
)

// Server names one member of the cluster.
type Server struct {
	ID      string // raft server ID, unique in the cluster
	Address string // raft transport address, host:port for TCP
}

// Config describes one node.
type Config struct {
	// ID is this node's raft server ID.
	ID string
	// Dir holds the node's raft log, stable store and snapshots. It must
	// not be shared with another node.
	Dir string
	// Transport carries raft traffic. When nil, a TCP transport listens on
	// Bind.
	Transport raft.Transport
	// Bind is the TCP address the raft transport listens on when Transport
	// is nil.
	Bind string
	// Bootstrap lists the initial members. A node whose Dir holds no state
	// bootstraps the cluster with them; a node with state ignores it.
	Bootstrap []Server
	// Raft tunes hashicorp/raft. Nil uses defaults suited to a LAN.
	Raft *raft.Config
	// Options configure the lease.Service each node applies the log to
	// (TTL bounds, capacities). Clocks are the node's own: WithClock is
	// refused.
	Options []lease.Option
}

// ErrNotLeader matches the error of a write (or a linearizable read) sent to
// a node that is not the leader; errors.As with *NotLeaderError names the
// leader, when one is known.
var ErrNotLeader = errors.New("replicated: not the leader")

// NotLeaderError is returned by an operation that only the leader can serve.
type NotLeaderError struct {
	Op            string
	LeaderID      string // empty when no leader is known
	LeaderAddress string
}

func (e *NotLeaderError) Error() string {
	if e.LeaderID == "" {
		return "replicated: " + e.Op + ": not the leader, and no leader is known"
	}
	return "replicated: " + e.Op + ": not the leader; the leader is " + e.LeaderID + " at " + e.LeaderAddress
}

// Is reports whether target is ErrNotLeader.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }

// ReadOption changes how a read is served.
type ReadOption interface{ applyRead(*readOptions) }

type readOptions struct{ stale bool }

type readOptionFunc func(*readOptions)

func (f readOptionFunc) applyRead(o *readOptions) { f(o) }

// Stale serves a read from the node's own state, on any node, without
// confirming leadership: it may miss the latest writes.
func Stale() ReadOption { return readOptionFunc(func(o *readOptions) { o.stale = true }) }

// Node is one member of a replicated lease service. Writes go to the leader;
// reads are linearizable (leader only) unless Stale. A Node is safe for
// concurrent use.
type Node struct{}

// Open starts a node: it opens (or creates) its stores in cfg.Dir, joins the
// raft cluster and returns once the node is running (not necessarily
// leader). Bad configuration gets a *lease.Error with CodeInvalidArgument
// naming the field.
func Open(ctx context.Context, cfg Config) (*Node, error) { panic("unimplemented") }

// Grant creates a lease, like lease.Service.Grant, once the cluster has
// committed it.
func (n *Node) Grant(ctx context.Context, holder string, purpose lease.Purpose, ttl time.Duration) (lease.Lease, error) {
	panic("unimplemented")
}

// GrantWithKey is lease.Service.GrantWithKey, committed by the cluster.
func (n *Node) GrantWithKey(ctx context.Context, holder string, purpose lease.Purpose, ttl time.Duration, key string, value []byte) (lease.Lease, error) {
	panic("unimplemented")
}

// Renew is lease.Service.Renew, committed by the cluster.
func (n *Node) Renew(ctx context.Context, id lease.ID) (lease.Lease, error) { panic("unimplemented") }

// Revoke is lease.Service.Revoke, committed by the cluster.
func (n *Node) Revoke(ctx context.Context, id lease.ID) (lease.Lease, error) { panic("unimplemented") }

// Put is lease.Service.Put, committed by the cluster.
func (n *Node) Put(ctx context.Context, key string, value []byte, id lease.ID) error {
	panic("unimplemented")
}

// Delete is lease.Service.Delete, committed by the cluster.
func (n *Node) Delete(ctx context.Context, key string) (bool, error) { panic("unimplemented") }

// Info is lease.Service.Info as a read.
func (n *Node) Info(ctx context.Context, id lease.ID, opts ...ReadOption) (lease.Lease, error) {
	panic("unimplemented")
}

// Get is lease.Service.Get as a read.
func (n *Node) Get(ctx context.Context, key string, opts ...ReadOption) (value []byte, id lease.ID, ok bool, err error) {
	panic("unimplemented")
}

// List is lease.Service.List as a read.
func (n *Node) List(ctx context.Context, opts ...ReadOption) ([]lease.Lease, error) {
	panic("unimplemented")
}

// Leader returns the current leader's ID and address, empty when none is
// known.
func (n *Node) Leader() (id, address string) { panic("unimplemented") }

// Raft returns the node's raft instance, for membership changes and
// observation. Applying to it directly bypasses the service.
func (n *Node) Raft() *raft.Raft { panic("unimplemented") }

// Close leaves the node's stores consistent and stops it. Nothing of the
// node runs after Close returns.
func (n *Node) Close() error { panic("unimplemented") }
