package replicated

import (
	"context"
	"errors"

	"github.com/hashicorp/raft"

	"github.com/leasehold/lease"
)

// readOp is a read a node serves from its service.
type readOp byte

const (
	readInfo readOp = iota + 1
	readGet
	readList
	readScan
	readUse
)

var readNames = [...]string{readInfo: "info", readGet: "get", readList: "list", readScan: "scan", readUse: "use"}

func (o readOp) String() string {
	if int(o) < len(readNames) && readNames[o] != "" {
		return readNames[o]
	}
	return "unknown"
}

// query is one read: its operation and arguments.
type query struct {
	op      readOp
	id      lease.ID
	purpose lease.Purpose
	key     string // the key of get, the prefix of scan
	limit   int
}

// answer is a read's result.
type answer struct {
	lease  lease.Lease
	leases []lease.Lease
	kvs    []lease.KeyValue
	value  []byte
	id     lease.ID
	ok     bool
	err    error
}

// serve answers q from svc.
func (q *query) serve(ctx context.Context, svc *lease.Service) (a answer) {
	switch q.op {
	case readInfo:
		a.lease, a.err = svc.Info(ctx, q.id)
	case readUse:
		a.lease, a.err = svc.Use(ctx, q.id, q.purpose)
	case readGet:
		a.value, a.id, a.ok, a.err = svc.Get(ctx, q.key)
	case readList:
		a.leases, a.err = svc.List(ctx)
	case readScan:
		a.kvs, a.err = svc.Scan(ctx, q.key, q.limit)
	}
	return a
}

// Info is lease.Service.Info as a linearizable read.
func (n *Node) Info(ctx context.Context, id lease.ID) (lease.Lease, error) {
	a := n.read(ctx, &query{op: readInfo, id: id}, false)
	return a.lease, a.err
}

// Use is lease.Service.Use as a linearizable read: it checks that the lease
// is active and was granted for purpose, and changes nothing. Its decision
// is recorded in the audit trail of the node that serves it.
func (n *Node) Use(ctx context.Context, id lease.ID, purpose lease.Purpose) (lease.Lease, error) {
	a := n.read(ctx, &query{op: readUse, id: id, purpose: purpose}, false)
	return a.lease, a.err
}

// Get is lease.Service.Get as a linearizable read.
func (n *Node) Get(ctx context.Context, key string) (value []byte, id lease.ID, ok bool, err error) {
	a := n.read(ctx, &query{op: readGet, key: key}, false)
	return a.value, a.id, a.ok, a.err
}

// List is lease.Service.List as a linearizable read.
func (n *Node) List(ctx context.Context) ([]lease.Lease, error) {
	a := n.read(ctx, &query{op: readList}, false)
	return a.leases, a.err
}

// Scan is lease.Service.Scan as a linearizable read: the keys that start
// with prefix, in key order, at most limit of them when limit > 0.
func (n *Node) Scan(ctx context.Context, prefix string, limit int) ([]lease.KeyValue, error) {
	a := n.read(ctx, &query{op: readScan, key: prefix, limit: limit}, false)
	return a.kvs, a.err
}

// StaleReader serves reads from one node's own state, on any node, without
// confirming leadership: they may miss the latest writes, and may show a
// lease whose expiry has passed that the log has not ended yet (while no
// node leads, for instance). A linearizable read shows neither. A
// StaleReader is a plain value, safe for concurrent use.
type StaleReader struct{ n *Node }

// Stale returns the node's stale reads.
func (n *Node) Stale() StaleReader { return StaleReader{n} }

// Info is Node.Info served from the node's own state.
func (r StaleReader) Info(ctx context.Context, id lease.ID) (lease.Lease, error) {
	a := r.n.read(ctx, &query{op: readInfo, id: id}, true)
	return a.lease, a.err
}

// Get is Node.Get served from the node's own state.
func (r StaleReader) Get(ctx context.Context, key string) (value []byte, id lease.ID, ok bool, err error) {
	a := r.n.read(ctx, &query{op: readGet, key: key}, true)
	return a.value, a.id, a.ok, a.err
}

// List is Node.List served from the node's own state.
func (r StaleReader) List(ctx context.Context) ([]lease.Lease, error) {
	a := r.n.read(ctx, &query{op: readList}, true)
	return a.leases, a.err
}

// Scan is Node.Scan served from the node's own state.
func (r StaleReader) Scan(ctx context.Context, prefix string, limit int) ([]lease.KeyValue, error) {
	a := r.n.read(ctx, &query{op: readScan, key: prefix, limit: limit}, true)
	return a.kvs, a.err
}

// read serves q: from the node's own state when stale, linearizably
// otherwise, on the leader (this node, or the leader it forwards to).
func (n *Node) read(ctx context.Context, q *query, stale bool) answer {
	if !stale {
		a := n.readHere(ctx, q)
		if f, ok := n.forwardable(a.err); ok {
			return f.read(ctx, q)
		}
		return a
	}
	if err := n.readable(ctx, q.op.String()); err != nil {
		return answer{err: err}
	}
	return n.local(ctx, q)
}

// readHere serves q linearizably on this node, which must lead.
func (n *Node) readHere(ctx context.Context, q *query) answer {
	op := q.op.String()
	if err := n.readable(ctx, op); err != nil {
		return answer{err: err}
	}
	if err := n.readBarrier(ctx, op); err != nil {
		return answer{err: err}
	}
	return n.local(ctx, q)
}

// readable checks what every read needs: a live context and an open node.
func (n *Node) readable(ctx context.Context, op string) error {
	if ctx == nil {
		return invalidOp(op, "ctx", "must not be nil")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-n.closing:
		return closedError(op)
	default:
		return nil
	}
}

// local answers q from the node's own service.
func (n *Node) local(ctx context.Context, q *query) answer {
	for {
		st := n.fsm.state.Load()
		a := q.serve(ctx, st.svc)
		if n.fsm.state.Load() == st {
			select {
			case <-n.closing:
				// The service may have answered empty because Close
				// closed it.
				return answer{err: closedError(q.op.String())}
			default:
			}
			return a
		}
		// A snapshot restore replaced the service meanwhile: read the new one.
		select {
		case <-n.closing:
			return answer{err: closedError(q.op.String())}
		default:
		}
	}
}

// readBarrier makes a linearizable read safe: on the leader, once its term
// has applied everything earlier terms committed, it captures the commit
// index, confirms leadership with a quorum, waits until the FSM has
// applied that index, and settles every deadline due by the leader's
// clock.
func (n *Node) readBarrier(ctx context.Context, op string) error {
	t := n.currentTerm(ctx)
	if t == nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		return n.notLeader(op)
	}
	select {
	case <-t.ready:
	case <-t.ctx.Done():
		return n.notLeader(op)
	case <-ctx.Done():
		return ctx.Err()
	case <-n.closing:
		return closedError(op)
	}
	index := n.raft.CommitIndex()
	if err := n.verifyLeader(op); err != nil {
		return err
	}
	if index > t.barrier { // else applied before the term's barrier completed
		if err := n.fsm.waitApplied(ctx, op, index, n.closing); err != nil {
			return err
		}
	}
	return n.settle(ctx, op)
}

// verifyLeader confirms with a quorum that the node still leads. raft
// leaves a confirmation asked for while it shuts down unanswered, so Close
// waits for those under way (verifyMu) before it shuts raft down.
func (n *Node) verifyLeader(op string) error {
	n.verifyMu.RLock()
	defer n.verifyMu.RUnlock()
	select {
	case <-n.closing:
		return closedError(op)
	default:
	}
	if err := n.raft.VerifyLeader().Error(); err != nil {
		if errors.Is(err, raft.ErrLeadershipLost) {
			// A read changes nothing: losing leadership while confirming it
			// leaves nothing uncertain, and the read may go to the next
			// leader.
			return n.notLeader(op)
		}
		return n.raftError(op, err)
	}
	return nil
}
