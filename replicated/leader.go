package replicated

import (
	"context"
	"errors"
	"runtime"
	"time"

	"github.com/hashicorp/raft"
)

// The leader's side: every write becomes a command in a queue; one batcher
// goroutine takes whatever is queued (group commit), stamps it with the
// leader's time and proposes it as one log entry; one responder goroutine
// waits for each entry to be applied and hands every command its result.
// The expiry loop of the current term watches the earliest deadline the
// node's service armed on the log clock and, when it is due, asks the
// batcher for a tick: an entry stamped at or after the deadline, which ends
// the same leases on every node.

// request is one command waiting for its result, or a linearizable read
// waiting for the log's time to reach the leader's.
type request struct {
	op    opCode
	enc   []byte      // the command, encoded by the caller; nil for a read
	reply chan result // capacity 1: the responder never waits
	// read names the read operation of a request without a command: its
	// entry is stamped at or after settle (unix nanoseconds), and the
	// read answers once that entry is applied.
	read   string
	settle int64
	// small holds enc when it fits, as a renewal's or a revocation's
	// does (an op byte and an ID): one allocation fewer per command.
	small [16]byte
}

// opName is the operation errors about r name.
func (r *request) opName() string {
	if r.read != "" {
		return r.read
	}
	return r.op.String()
}

// flight is one proposed entry.
type flight struct {
	future raft.ApplyFuture
	prop   *proposal // the entry's tracking, when it carries commands
	reqs   []*request
	tick   *term // the term whose tick the entry carries, if any
	slot   bool  // the entry holds one of the batcher's pipeline slots
}

// term is one leadership term of this node.
type term struct {
	ctx    context.Context // cancelled when leadership is lost
	cancel context.CancelFunc
	ready  chan struct{} // closed once the term's barrier has been applied
	done   chan struct{} // closed when the term's goroutine returns
	// barrier is the index of the term's barrier entry; set before ready.
	barrier uint64
	// lastIssued is the latest stamp issued (unix nanoseconds): set before
	// ready, then owned by the batcher.
	lastIssued int64
	// tickFailed tells the expiry loop that a tick it asked for failed.
	tickFailed chan struct{}
}

// run follows raft's leadership changes until Close.
func (n *Node) run() {
	defer n.wg.Done()
	for {
		select {
		case <-n.closing:
			n.endTerm()
			return
		case leader := <-n.notify:
			n.endTerm()
			if leader {
				n.startTerm()
			}
		}
	}
}

func (n *Node) startTerm() {
	ctx, cancel := context.WithCancel(context.Background())
	t := &term{ctx: ctx, cancel: cancel, ready: make(chan struct{}), done: make(chan struct{}), tickFailed: make(chan struct{}, 1)}
	n.termMu.Lock()
	n.term.Store(t)
	if n.termStarted != nil {
		close(n.termStarted)
		n.termStarted = nil
	}
	n.termMu.Unlock()
	go n.lead(t)
}

// termWait bounds how long a call waits for the term of a node that raft
// already made leader to start.
const termWait = time.Second

// currentTerm returns the term under way, or nil when the node does not
// lead. raft tells the node it leads a moment after its state says so; in
// that moment currentTerm waits for the term to start.
func (n *Node) currentTerm(ctx context.Context) *term {
	var deadline <-chan time.Time
	for {
		n.termMu.Lock()
		t := n.term.Load()
		if t != nil || n.raft.State() != raft.Leader {
			n.termMu.Unlock()
			return t
		}
		if n.termStarted == nil {
			n.termStarted = make(chan struct{})
		}
		started := n.termStarted
		n.termMu.Unlock()
		if deadline == nil {
			timer := time.NewTimer(termWait)
			defer timer.Stop()
			deadline = timer.C
		}
		select {
		case <-started:
		case <-deadline:
			return nil
		case <-ctx.Done():
			return nil
		case <-n.closing:
			return nil
		}
	}
}

func (n *Node) endTerm() {
	t := n.term.Swap(nil)
	if t == nil {
		return
	}
	t.cancel()
	<-t.done
	n.termChanged()
}

func (n *Node) termChanged() {
	if n.onTerm != nil {
		n.onTerm()
	}
}

// lead runs a term: it first commits a barrier, so that everything earlier
// terms committed is applied, and takes the time from the last applied
// entry, so that the service's time never runs backwards across a
// failover; then it serves writes and runs the expiry loop.
func (n *Node) lead(t *term) {
	defer close(t.done)
	for {
		f := n.raft.Barrier(0)
		err := f.Error()
		if err == nil {
			if idx, ok := f.(raft.IndexFuture); ok {
				t.barrier = idx.Index()
			}
			break
		}
		select {
		case <-t.ctx.Done():
			return
		case <-n.closing:
			return
		default:
		}
		if err == raft.ErrRaftShutdown || err == raft.ErrNotLeader || err == raft.ErrLeadershipLost {
			<-t.ctx.Done() // raft tells run, which ends the term
			return
		}
	}
	t.lastIssued = n.fsm.now().UnixNano()
	close(t.ready)
	n.termChanged()
	n.expiryLoop(t)
}

// expiryLoop asks for a tick whenever the earliest deadline on the log
// clock is due by the leader's clock. It asks once per deadline: applying
// the tick moves the earliest deadline, which wakes the loop again.
func (n *Node) expiryLoop(t *term) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var asked time.Time // the deadline last asked for
	for {
		if due, ok := n.fsm.next(); ok && !due.Equal(asked) {
			if d := time.Until(due); d <= 0 {
				n.askTick(due)
				asked = due
			} else {
				timer.Reset(d)
			}
		}
		select {
		case <-t.ctx.Done():
			return
		case <-n.clockMove:
		case <-timer.C:
		case <-t.tickFailed:
			asked = time.Time{}
		}
		timer.Stop()
	}
}

// askTick asks the batcher for an entry stamped at or after due.
func (n *Node) askTick(due time.Time) {
	select {
	case old := <-n.tickCh:
		if old.After(due) {
			due = old
		}
	default:
	}
	n.tickCh <- due // only the expiry loop sends, and the channel is empty now
}

// settle makes the log's time reach the leader's before a linearizable
// read answers: while a deadline armed on the log clock is due by the
// leader's clock, it commits an entry stamped at or after now through the
// batcher, as a tick, and waits until it is applied. The expiry loop would
// commit that tick too, but only after the read answered with a lease past
// its expiry: after a leaderless period or a whole-cluster restart, until
// the new leader's first entry commits, and for a moment after any
// deadline.
func (n *Node) settle(ctx context.Context, op string) error {
	now := time.Now()
	for {
		if due, ok := n.fsm.next(); !ok || due.After(now) {
			return nil
		}
		req := &request{read: op, settle: now.UnixNano(), reply: make(chan result, 1)}
		if r := n.send(ctx, req); r.err != nil {
			return r.err
		}
	}
}

// submit sends one command through the leader's batcher and waits for its
// result.
func (n *Node) submit(ctx context.Context, c command) result {
	op := c.op.String()
	if ctx == nil {
		return result{err: invalidOp(op, "ctx", "must not be nil")}
	}
	if err := ctx.Err(); err != nil {
		return result{err: err}
	}
	select {
	case <-n.closing:
		return result{err: closedError(op)}
	default:
	}
	if n.raft.State() != raft.Leader {
		return result{err: n.notLeader(op)}
	}
	req := &request{op: c.op, reply: make(chan result, 1)}
	req.enc = appendCommand(req.small[:0], &c)
	return n.send(ctx, req)
}

// send queues req for the batcher and waits for its result. A command
// whose entry's outcome is uncertain is settled (see outcome.go): its
// result when the entry was committed, and sent again when it was not,
// while this node leads (NotLeaderError otherwise: nothing was applied).
func (n *Node) send(ctx context.Context, req *request) result {
	for {
		r := n.sendOnce(ctx, req)
		if r.prop == nil {
			return r
		}
		res, drop := n.settleOutcome(ctx, req.opName(), r.prop, r.pos)
		if !drop {
			return res
		}
		if n.raft.State() != raft.Leader {
			return result{err: n.notLeader(req.opName())}
		}
		req.reply = make(chan result, 1)
	}
}

// sendOnce queues req for the batcher and waits for its answer.
func (n *Node) sendOnce(ctx context.Context, req *request) result {
	select {
	case n.queue <- req:
	case <-ctx.Done():
		return result{err: ctx.Err()}
	case <-n.closing:
		return result{err: closedError(req.opName())}
	}
	select {
	case r := <-req.reply:
		return r
	case <-ctx.Done():
		return result{err: ctx.Err()}
	case <-n.stopped:
		return result{err: closedError(req.opName())}
	}
}

// batcher proposes the queued commands, as many as it finds up to the
// bounds, one log entry at a time, until Close. At most pipelineDepth
// entries of commands are in flight: while they commit, the queue fills,
// and the next entry carries what gathered (group commit) instead of raft
// paying its per-entry costs for each command. A tick never waits for a
// slot: when the pipeline is full it goes out at once in an entry of its
// own, so that an expiry waits for no renewal batch but the ones raft is
// already writing.
func (n *Node) batcher() {
	defer n.wg.Done()
	defer close(n.inflight)
	for {
		var (
			reqs []*request
			tick time.Time
		)
		select {
		case <-n.closing:
			n.failQueued()
			return
		case r := <-n.queue:
			reqs = append(reqs, r)
		case tick = <-n.tickCh:
			n.propose(nil, tick, false)
			continue
		}
	slot:
		for {
			select {
			case n.slots <- struct{}{}:
				break slot
			case tk := <-n.tickCh:
				n.propose(nil, tk, false)
			case <-n.closing:
				n.failClosed(reqs)
				n.failQueued()
				return
			}
		}
		n.gather(&reqs)
		select {
		case tick = <-n.tickCh:
		default:
		}
		n.propose(reqs, tick, true)
	}
}

// gatherRounds bounds how many times gather yields for more commands.
const gatherRounds = 4

// gather adds to reqs what is queued, up to the bounds. The clients an
// entry just answered are queuing their next commands while the batcher
// gathers: it yields to them and gathers again, for as long as the queue
// grows (up to gatherRounds times), so that they go in this entry instead
// of waiting a whole commit for the next.
func (n *Node) gather(reqs *[]*request) {
	size := 0
	for _, r := range *reqs {
		size += len(r.enc)
	}
	for range gatherRounds {
		runtime.Gosched()
		before := len(*reqs)
	take:
		for len(*reqs) < maxBatch && size < maxBatchLen {
			select {
			case r := <-n.queue:
				*reqs = append(*reqs, r)
				size += len(r.enc)
			default:
				break take
			}
		}
		if len(*reqs) == before || len(*reqs) >= maxBatch || size >= maxBatchLen {
			return
		}
	}
}

// propose stamps reqs (and tick, when not zero) into one entry and hands it
// to raft and then to the responder; slot says whether the entry holds a
// pipeline slot, which the responder gives back.
func (n *Node) propose(reqs []*request, tick time.Time, slot bool) {
	release := func() {
		if slot {
			<-n.slots
		}
	}
	t := n.currentTerm(context.Background())
	if t == nil {
		n.fail(reqs, nil)
		release()
		return
	}
	select {
	case <-t.ready:
	case <-t.ctx.Done():
		n.fail(reqs, nil)
		release()
		return
	case <-n.closing:
		n.fail(reqs, nil)
		release()
		return
	}
	var (
		cmds   int
		size   int
		settle int64 // the latest stamp a read needs
	)
	for _, r := range reqs {
		if r.enc != nil {
			cmds++
			size += len(r.enc)
		}
		settle = max(settle, r.settle)
	}
	stamp := max(time.Now().UnixNano(), t.lastIssued, tick.UnixNano(), settle)
	t.lastIssued = stamp
	data := make([]byte, 0, 16+size)
	data = encodeHeader(data, stamp, cmds)
	for _, r := range reqs {
		data = append(data, r.enc...)
	}
	fl := &flight{reqs: reqs, slot: slot}
	if cmds > 0 {
		key := n.keys.next()
		fl.prop = n.fsm.track(key)
		fl.future = n.raft.ApplyLog(raft.Log{Data: data, Extensions: key}, 0)
	} else {
		fl.future = n.raft.Apply(data, 0)
	}
	if !tick.IsZero() {
		fl.tick = t
	}
	n.inflight <- fl // the responder drains it, and raft answers every future by Shutdown
}

// fail answers reqs with err, or with ErrNotLeader when err is nil.
func (n *Node) fail(reqs []*request, err error) {
	for _, r := range reqs {
		e := err
		if e == nil {
			e = n.notLeader(r.opName())
		}
		r.reply <- result{err: e}
	}
}

// failQueued answers every queued command: the node is closing.
func (n *Node) failQueued() {
	for {
		select {
		case r := <-n.queue:
			n.failClosed([]*request{r})
		default:
			return
		}
	}
}

// failClosed answers reqs: the node is closing.
func (n *Node) failClosed(reqs []*request) {
	for _, r := range reqs {
		r.reply <- result{err: closedError(r.opName())}
	}
}

// responder waits for each proposed entry in turn and answers its commands.
func (n *Node) responder() {
	defer n.wg.Done()
	for fl := range n.inflight {
		err := fl.future.Error()
		var res []result
		if err == nil {
			switch r := fl.future.Response().(type) {
			case []result:
				res = r
			case error:
				err = r
			}
		}
		if err != nil && fl.tick != nil {
			select {
			case fl.tick.tickFailed <- struct{}{}:
			default:
			}
		}
		// An entry of commands whose outcome is uncertain is settled by
		// each of its callers (see outcome.go).
		settling := false
		if fl.prop != nil {
			if errors.Is(err, raft.ErrLeadershipLost) {
				cmds := 0
				for _, r := range fl.reqs {
					if r.enc != nil {
						cmds++
					}
				}
				settling = n.fsm.uncertain(fl.prop, fl.future.Index(), cmds)
				n.uncertainEntries.Add(1)
			} else {
				n.fsm.forget(fl.prop)
			}
		}
		i := 0
		for _, r := range fl.reqs {
			switch {
			case err != nil && r.read != "" && errors.Is(err, raft.ErrLeadershipLost):
				r.reply <- result{err: n.notLeader(r.read)} // nothing of a read's was in the entry
			case settling && r.enc != nil:
				r.reply <- result{err: uncertain(r.opName()), prop: fl.prop, pos: i}
				i++
			case err != nil:
				r.reply <- result{err: n.raftError(r.opName(), err)}
			case r.enc == nil:
				r.reply <- result{}
			default:
				r.reply <- res[i]
				i++
			}
		}
		if fl.slot {
			<-n.slots
		}
	}
}
