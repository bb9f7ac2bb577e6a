package replicated

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
)

// ClaimStore is a claim.Store whose queues live in the cluster: a work
// queue with no database, surviving the loss of any minority of nodes.
// Every node applies the log to a claim.Memory of its own (over a
// lease.Service of its own, on the log's clock), so every node holds the
// same items and claims; a store call that changes anything (Enqueue,
// Claim, Extend, Settle, Cancel, the dead-letter and operator calls) is a
// log command, committed through the leader's batcher, which puts the
// calls of many workers in one entry, and answered by the leader. Lookup,
// List, Counts and Queues are linearizable reads. A follower forwards
// every call to the leader, as the Node does its own.
//
// The queues are the cluster's, not the store's: every ClaimStore of every
// node sees the same ones, and Close only ends this handle. Claims are
// leases of the queues' own service, whose IDs are their fencing tokens:
// they increase across leader changes and restarts, as the log carries
// them. A claim's lease ends when the leader commits an entry at its
// expiry, as the Node's leases do. The store has no Clock method: a
// claim.Broker on it heartbeats on the system clock, which the
// package's clock-skew assumption (the nodes' clocks agree to within what
// the leases need) ties to the log's time.
//
// Notify wakes a worker when its node applies a change that makes an item
// of the queue claimable (an enqueue, a claim lost, a delay ended, a
// retry, a requeue, a resume), never by polling. ClaimRequest.Lost is
// called when the caller's node applies the claim's loss, which may be
// after the leader handed the item to another claim: the fencing token
// tells the two apart.
//
// Errors are those of claim.Memory with the replicated package's prefix
// (*lease.Error, Package "replicated"); one about an item that does not
// exist also matches the *claim.NotFoundError the Memory returns
// (errors.As), through a follower too. Then the Node's: ErrNotLeader with
// no leader to forward to, ErrOutcomeUnknown for a write whose outcome the
// node could not settle, lease.ErrClosed after Close or the node's
// Close. A ClaimStore is safe for concurrent use.
type ClaimStore struct {
	fsm      *fsm                                                   // the node's, whose queues Notify watches
	do       func(context.Context, *claimCall) (*claimReply, error) // the node's claimCall
	stopLost func()
	closing  chan struct{}
	notifies sync.WaitGroup
	// callbacks counts the Lost functions called and not yet returned,
	// which Close waits for.
	callbacks sync.WaitGroup

	mu     sync.Mutex
	closed bool
	// pending holds the Lost functions of this store's live claims; recent
	// the losses the node applied before their claim's caller got its
	// answer (a follower may apply a claim and its loss first), oldest
	// first, bounded by recentLosses.
	pending map[claim.Ref]func(claim.Ref, error)
	recent  map[claim.Ref]error
	order   [recentLosses]claim.Ref // recent's keys, a ring whose next slot is next
	next    int
}

// recentLosses bounds the losses a ClaimStore remembers for claims whose
// answer has not reached their caller yet.
const recentLosses = 1024

var (
	_ claim.Store            = (*ClaimStore)(nil)
	_ claimstore.Cleaner     = (*ClaimStore)(nil)
	_ claimstore.Pauser      = (*ClaimStore)(nil)
	_ claimstore.QueueLister = (*ClaimStore)(nil)
	_ claimstore.Retrier     = (*ClaimStore)(nil)
)

// NewClaimStore returns a claim store on n's cluster. A nil n gets a
// *lease.Error with Code lease.CodeInvalidArgument naming node; a closed
// one, lease.CodeClosed.
func NewClaimStore(n *Node) (*ClaimStore, error) {
	const op = "NewClaimStore"
	if n == nil {
		return nil, invalidOp(op, "node", "must not be nil")
	}
	select {
	case <-n.closing:
		return nil, closedError(op)
	default:
	}
	return newClaimStore(n.fsm, n.claimCall), nil
}

// newClaimStore returns a store whose calls do makes, on f's queues.
func newClaimStore(f *fsm, do func(context.Context, *claimCall) (*claimReply, error)) *ClaimStore {
	s := &ClaimStore{fsm: f, do: do, closing: make(chan struct{}), pending: map[claim.Ref]func(claim.Ref, error){}, recent: map[claim.Ref]error{}}
	s.stopLost = f.lost.subscribe(s.lost)
	return s
}

// call makes c on the cluster and gives the Memory's errors the package's
// prefix.
func (s *ClaimStore) call(ctx context.Context, c *claimCall) (*claimReply, error) {
	op := string(c.Op)
	if ctx == nil {
		return nil, invalidOp(op, "ctx", "must not be nil")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, closedError(op)
	}
	if err := checkCall(c); err != nil {
		return nil, ownError(err)
	}
	rep, err := s.do(ctx, c)
	if err != nil {
		return nil, ownError(err)
	}
	return rep, nil
}

// ownError gives an error of the Memory (Package "claim", or none after
// forwarding) the package's prefix; other errors are returned as they are.
// A *claim.NotFoundError keeps its type: the error returned is a
// *lease.Error with the prefix that also matches it (errors.As).
func ownError(err error) error {
	var nf *claim.NotFoundError
	if errors.As(err, &nf) {
		var le *lease.Error
		if errors.As(nf.Unwrap(), &le) {
			e := *le
			e.Package = "replicated"
			return &causedError{le: &e, cause: nf}
		}
	}
	var le *lease.Error
	if !errors.As(err, &le) || le.Package == "replicated" {
		return err
	}
	if le.Package != "claim" && le.Package != "" {
		return err
	}
	e := *le
	e.Package = "replicated"
	return &e
}

// Enqueue adds items in one log entry; see claim.Store.
func (s *ClaimStore) Enqueue(ctx context.Context, items []claim.NewItem) ([]claim.Item, error) {
	rep, err := s.call(ctx, &claimCall{Op: callEnqueue, Items: items})
	if err != nil {
		return nil, err
	}
	if rep.Items == nil {
		rep.Items = []claim.Item{}
	}
	return rep.Items, nil
}

// Claim claims up to req.Limit items of req.Queue; see claim.Store. Each
// claim is a lease of the queues' service, for req.Lease on the log's
// clock.
func (s *ClaimStore) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	rep, err := s.call(ctx, &claimCall{Op: callClaim, Request: &claimRequest{Queue: req.Queue, Owner: req.Owner, Limit: req.Limit, Lease: req.Lease}})
	if err != nil {
		return nil, err
	}
	if rep.Claims == nil {
		rep.Claims = []claim.Claim{}
	}
	if req.Lost != nil {
		for _, c := range rep.Claims {
			s.watch(c.Ref, req.Lost)
		}
	}
	return rep.Claims, nil
}

// Extend extends the live claim r; see claim.Store.
func (s *ClaimStore) Extend(ctx context.Context, r claim.Ref, d time.Duration) (time.Time, error) {
	rep, err := s.call(ctx, &claimCall{Op: callExtend, Ref: r, Lease: d})
	if err != nil {
		if errors.Is(err, lease.ErrStaleUse) {
			s.forget(r)
		}
		return time.Time{}, err
	}
	return rep.Time, nil
}

// Settle ends the live claim st.Ref; see claim.Store. It returns once the
// settlement is committed.
func (s *ClaimStore) Settle(ctx context.Context, st claim.Settlement) error {
	_, err := s.call(ctx, &claimCall{Op: callSettle, Settlement: &st})
	if err == nil || errors.Is(err, lease.ErrStaleUse) {
		s.forget(st.Ref)
	}
	return err
}

// Cancel cancels the item id of queue; see claim.Store.
func (s *ClaimStore) Cancel(ctx context.Context, queue string, id claim.ItemID) error {
	_, err := s.call(ctx, &claimCall{Op: callCancel, Queue: queue, ID: id})
	return err
}

// Lookup returns the item id, as a linearizable read.
func (s *ClaimStore) Lookup(ctx context.Context, id claim.ItemID) (claim.Item, error) {
	rep, err := s.call(ctx, &claimCall{Op: callLookup, ID: id})
	if err != nil {
		return claim.Item{}, err
	}
	return *rep.Item, nil
}

// List returns items of q.Queue, as a linearizable read; see claim.Store.
func (s *ClaimStore) List(ctx context.Context, q claim.Query) ([]claim.Item, error) {
	rep, err := s.call(ctx, &claimCall{Op: callList, Query: &q})
	if err != nil {
		return nil, err
	}
	if rep.Items == nil {
		rep.Items = []claim.Item{}
	}
	return rep.Items, nil
}

// Counts returns the numbers of items of queue in each state, as a
// linearizable read.
func (s *ClaimStore) Counts(ctx context.Context, queue string) (claim.Counts, error) {
	rep, err := s.call(ctx, &claimCall{Op: callCounts, Queue: queue})
	if err != nil {
		return claim.Counts{}, err
	}
	return rep.Counts, nil
}

// Queues lists the queues, as a linearizable read; see claimstore.QueueLister.
func (s *ClaimStore) Queues(ctx context.Context, q claim.QueueQuery) ([]claim.QueueInfo, error) {
	rep, err := s.call(ctx, &claimCall{Op: callQueues, QueueQuery: &q})
	if err != nil {
		return nil, err
	}
	if rep.Queues == nil {
		rep.Queues = []claim.QueueInfo{}
	}
	return rep.Queues, nil
}

// RequeueDead makes the dead item id of queue visible again; see
// claim.Store.
func (s *ClaimStore) RequeueDead(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	rep, err := s.call(ctx, &claimCall{Op: callRequeueDead, Queue: queue, ID: id})
	if err != nil {
		return claim.Item{}, err
	}
	return *rep.Item, nil
}

// DeleteDead deletes the dead item id of queue; see claim.Store.
func (s *ClaimStore) DeleteDead(ctx context.Context, queue string, id claim.ItemID) error {
	_, err := s.call(ctx, &claimCall{Op: callDeleteDead, Queue: queue, ID: id})
	return err
}

// RetryNow makes the delayed item id of queue visible now; see
// claimstore.Retrier.
func (s *ClaimStore) RetryNow(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	rep, err := s.call(ctx, &claimCall{Op: callRetryNow, Queue: queue, ID: id})
	if err != nil {
		return claim.Item{}, err
	}
	return *rep.Item, nil
}

// Pause pauses queue on every node; see claimstore.Pauser.
func (s *ClaimStore) Pause(ctx context.Context, queue string) error {
	_, err := s.call(ctx, &claimCall{Op: callPause, Queue: queue})
	return err
}

// Resume resumes queue on every node, waking its workers; see
// claimstore.Pauser.
func (s *ClaimStore) Resume(ctx context.Context, queue string) error {
	_, err := s.call(ctx, &claimCall{Op: callResume, Queue: queue})
	return err
}

// Clean removes up to limit finished items whose retention has passed, in
// one log entry; see claimstore.Cleaner.
func (s *ClaimStore) Clean(ctx context.Context, limit int) (int, error) {
	rep, err := s.call(ctx, &claimCall{Op: callClean, Limit: limit})
	if err != nil {
		return 0, err
	}
	return rep.N, nil
}

// SetRetention sets how long the cluster's queues keep finished items,
// for every store of every node (see claim.Retention and
// claim.Memory.SetRetention). The zero Retention, the initial one, keeps
// none. A bad Retention gets an error matching lease.ErrInvalidArgument
// naming the field.
func (s *ClaimStore) SetRetention(ctx context.Context, r claim.Retention) error {
	if err := r.Check(); err != nil {
		return ownError(err)
	}
	_, err := s.call(ctx, &claimCall{Op: callSetRetention, Retention: &r})
	return err
}

// Notify returns a channel closed once this node applies a change that may
// make an item of queue claimable, or the store or its node closes; see
// claim.Store. It never polls.
func (s *ClaimStore) Notify(queue string) (ready <-chan struct{}, stop func()) {
	out := make(chan struct{})
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		close(out)
		return out, func() {}
	}
	s.notifies.Add(1)
	s.mu.Unlock()
	// The queues are replaced when the node restores a snapshot: the old
	// Memory closes its channels then, and the worker looks again.
	woken, stopMem := s.fsm.state.Load().claims.mem.Notify(queue)
	quit := make(chan struct{})
	var once sync.Once
	go func() {
		defer s.notifies.Done()
		defer stopMem()
		select {
		case <-woken:
			close(out)
		case <-s.closing:
			close(out)
		case <-quit:
		}
	}()
	return out, func() { once.Do(func() { close(quit) }) }
}

// Close ends this handle: later calls get an error matching
// lease.ErrClosed, Notify channels close, and no Lost function is called
// after Close returns. The queues stay in the cluster, and the node open.
// Close is idempotent and returns nil.
func (s *ClaimStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	s.stopLost()
	s.notifies.Wait()
	s.callbacks.Wait()
	s.mu.Lock()
	clear(s.pending)
	clear(s.recent)
	s.mu.Unlock()
	return nil
}

// lost hears a loss the node applied: the claim's caller is told, or the
// loss is kept for a caller whose answer has not come yet.
func (s *ClaimStore) lost(r claim.Ref, cause error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	fn := s.pending[r]
	if fn != nil {
		delete(s.pending, r)
		s.callbacks.Add(1)
		s.mu.Unlock()
		// The node tells of a loss with its queues' lock held: the
		// caller's function runs on a goroutine of its own, outside it.
		go func() {
			defer s.callbacks.Done()
			fn(r, cause)
		}()
		return
	}
	delete(s.recent, s.order[s.next]) // the oldest, if the ring is full
	s.recent[r] = cause
	s.order[s.next] = r
	s.next = (s.next + 1) % recentLosses
	s.mu.Unlock()
}

// watch waits for the loss of claim r, unless the node applied it already.
func (s *ClaimStore) watch(r claim.Ref, fn func(claim.Ref, error)) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if cause, ok := s.recent[r]; ok {
		delete(s.recent, r)
		s.callbacks.Add(1)
		s.mu.Unlock()
		defer s.callbacks.Done()
		fn(r, cause)
		return
	}
	s.pending[r] = fn
	s.mu.Unlock()
}

// forget stops waiting for the loss of claim r, which its caller settled
// or found stale.
func (s *ClaimStore) forget(r claim.Ref) {
	s.mu.Lock()
	delete(s.pending, r)
	s.mu.Unlock()
}
