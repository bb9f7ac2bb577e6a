package replicated

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Forwarding: a follower sends a write or a linearizable read it cannot
// serve to the leader over the node's own transport (a connection whose
// first byte is streamForward), and the leader serves it as its own call.
// A call that never reached the leader, or that the leader refused as not
// leading, is sent again to the next leader; a write whose connection
// fails after it was sent may have been applied, and says so.

// Bounds of forwarding.
const (
	// forwardWait bounds how long a call waits for a leader to forward
	// to, when its context has no earlier deadline.
	forwardWait = 10 * time.Second
	// forwardRetry is how soon a call tries again when no leader is known
	// or the leader could not be reached.
	forwardRetry = 20 * time.Millisecond
	// dialTimeout bounds a connection to the leader.
	dialTimeout = 5 * time.Second
	// maxIdle bounds the idle connections kept to one address.
	maxIdle = 16
)

var (
	errRemoteNotLeader = errors.New("replicated: the node forwarded to no longer leads")
	errRemoteClosed    = errors.New("replicated: the node forwarded to closed")
)

// forwarder sends calls a follower cannot serve to the leader. It is safe
// for concurrent use.
type forwarder struct {
	n      *Node
	stream *streamLayer
	// ctx ends when the forwarder closes: a dial under way gives up.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the lanes
	mu     sync.Mutex
	idle   map[string][]*fconn // by address
	open   map[*fconn]struct{} // every connection, idle or in use
	queues map[string]*fqueue  // by address: calls waiting to be sent
	closed bool
	dials  atomic.Int64 // connections opened, for tests
}

func newForwarder(n *Node, stream *streamLayer) *forwarder {
	ctx, cancel := context.WithCancel(context.Background())
	return &forwarder{n: n, stream: stream, ctx: ctx, cancel: cancel,
		idle: make(map[string][]*fconn), open: make(map[*fconn]struct{}), queues: make(map[string]*fqueue)}
}

// fconn is one connection to a leader.
type fconn struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
}

// forwardable reports whether a call that failed with err on this node
// goes to the leader instead.
func (n *Node) forwardable(err error) (*forwarder, bool) {
	if n.fwd == nil || !errors.Is(err, ErrNotLeader) {
		return nil, false
	}
	return n.fwd, true
}

// write sends c through the leader's batcher, forwarding it when this node
// does not lead.
func (n *Node) write(ctx context.Context, c command) result {
	r := n.submit(ctx, c)
	if f, ok := n.forwardable(r.err); ok {
		return f.write(ctx, &c)
	}
	return r
}

func (f *forwarder) write(ctx context.Context, c *command) result {
	op := c.op.String()
	req := appendCommand([]byte{reqWrite, 0}, c) // the timeout byte is rewritten per attempt
	a, err := f.call(ctx, op, req, true, false, func() (answer, bool) {
		r := f.n.submit(ctx, *c) // this node became leader meanwhile
		return answer{lease: r.lease, ok: r.ok, err: r.err}, !errors.Is(r.err, ErrNotLeader)
	})
	if err != nil {
		return result{err: err}
	}
	return result{lease: a.lease, ok: a.ok, err: a.err}
}

func (f *forwarder) read(ctx context.Context, q *query) answer {
	req := appendQuery([]byte{reqRead, 0}, q)
	a, err := f.call(ctx, q.op.String(), req, false, false, func() (answer, bool) {
		a := f.n.readHere(ctx, q)
		return a, !errors.Is(a.err, ErrNotLeader)
	})
	if err != nil {
		return answer{err: err}
	}
	return a
}

func (f *forwarder) member(ctx context.Context, op memberOp, id, address string) error {
	req := []byte{reqMember, 0, byte(op)}
	req = appendString(appendString(req, id), address)
	a, err := f.call(ctx, op.String(), req, true, false, func() (answer, bool) {
		err := f.n.memberHere(ctx, op, id, address)
		return answer{err: err}, !errors.Is(err, ErrNotLeader)
	})
	if err != nil {
		return err
	}
	return a.err
}

// call sends the request (kind, a timeout placeholder byte, body) to the
// leader until one answers it, the context ends or no leader turns up in
// time. here serves the call on this node when it turns out to lead; it
// reports false when it did not after all.
//
// A write whose leader went away after it was sent may have been applied:
// call returns an error matching ErrOutcomeUnknown, unless resend is set.
// resend says the write is safe to send again, because applying it twice
// fails the second time (a settlement, conditional on its claim being
// live) or does what the first did (an extension): it goes to the next
// leader, so that a write the old leader never committed is not lost with
// it. Its answer there is the call's, but for an error, which may come of
// the first attempt having been applied: that gets ErrOutcomeUnknown too.
func (f *forwarder) call(ctx context.Context, op string, req []byte, isWrite, resend bool, here func() (answer, bool)) (answer, error) {
	wait := time.NewTimer(forwardWait)
	defer wait.Stop()
	body := req[2:]
	var unsure bool // an attempt may have been applied
	answered := func(a answer) (answer, error) {
		if unsure && a.err != nil {
			a.err = resentUnknown(op, a.err)
		}
		return a, nil
	}
	giveUp := func(err error) (answer, error) {
		if unsure {
			return answer{}, outcomeUnknown(op, err)
		}
		return answer{}, err
	}
	for {
		id, addr := f.n.Leader()
		switch {
		case addr == "" && f.n.outside():
			return giveUp(f.n.notLeader(op)) // removed: no leader will come
		case id == f.n.id:
			if a, ok := here(); ok {
				if resend && errors.Is(a.err, ErrOutcomeUnknown) && ctx.Err() == nil {
					unsure = true
					break
				}
				return answered(a)
			}
		case addr != "":
			a, sent, err := f.roundTrip(ctx, op, addr, req[0], body)
			switch {
			case err == nil && resend && errors.Is(a.err, ErrOutcomeUnknown):
				// The leader lost its place while committing it.
				unsure = true
			case err == nil:
				return answered(a)
			case ctx.Err() != nil:
				return giveUp(ctx.Err())
			case errors.Is(err, errRemoteNotLeader):
				// Refused before entering the log: try the next leader.
			case isWrite && sent && resend:
				unsure = true
			case isWrite && sent:
				// The leader may have applied it before the connection
				// failed. A node closing cuts its connections: the caller
				// learns that too, as every call on a closed node does.
				select {
				case <-f.n.closing:
					return answer{}, cutUnknown(op, closedError(op))
				default:
					return answer{}, cutUnknown(op, nil)
				}
			}
		}
		select {
		case <-time.After(forwardRetry):
		case <-wait.C:
			return giveUp(f.n.notLeader(op))
		case <-ctx.Done():
			return giveUp(ctx.Err())
		case <-f.n.closing:
			return giveUp(closedError(op))
		}
	}
}

// outside reports whether the node has been removed from the cluster: its
// latest configuration does not list it.
func (n *Node) outside() bool {
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	servers := f.Configuration().Servers
	return len(servers) > 0 && !slices.ContainsFunc(servers, func(s raft.Server) bool { return string(s.ID) == n.id })
}

// roundTrip sends one request to addr and reads its answer. sent tells
// whether the request may have reached the leader. A decoded error from
// the leader comes back in the answer, except the ones call acts on
// (errRemoteNotLeader, errRemoteClosed, an uncertain outcome), returned as
// err. The request joins the calls under way to addr (see lane): it
// travels alone when the connections to addr are idle, and with the calls
// that queued beside it when they are busy.
func (f *forwarder) roundTrip(ctx context.Context, op, addr string, kind byte, body []byte) (a answer, sent bool, err error) {
	fc := &fcall{ctx: ctx, kind: kind, body: body, done: make(chan struct{})}
	if err := f.enqueue(addr, fc); err != nil {
		return answer{}, false, err
	}
	select {
	case <-fc.done:
	case <-ctx.Done():
		// The call may be in a batch on its way: the leader stops serving
		// it when its timeout, sent along, passes.
		return answer{}, true, ctx.Err()
	}
	if fc.err != nil {
		return answer{}, fc.sent, fc.err
	}
	d := decoder{buf: fc.resp}
	status := d.byte()
	if status == respOK {
		a = decodeAnswer(&d)
	} else {
		a.err = decodeError(&d, status, op)
	}
	if d.err != nil {
		return answer{}, true, d.err
	}
	switch {
	case errors.Is(a.err, errRemoteNotLeader):
		return answer{}, false, a.err
	case errors.Is(a.err, errRemoteClosed):
		return answer{}, true, a.err
	}
	return a, true, nil
}

// Coalescing: the calls a follower forwards to one leader queue up, and at
// most forwardLanes goroutines (lanes) per leader each take everything
// queued, up to maxForwardBatch calls and maxForwardBytes, send it as one
// frame on a connection of their own, and hand each call its answer. An
// idle follower's call goes out at once, alone; a busy one's calls gather
// while the lanes are waiting for answers, and the leader serves each
// batch's calls concurrently, so that its batcher commits them together:
// a round trip, a TLS record and a wake-up per batch instead of per call.
const (
	forwardLanes    = 2
	maxForwardBatch = 512
	maxForwardBytes = 8 << 20
)

// fcall is one call waiting for its answer from the leader.
type fcall struct {
	ctx  context.Context
	kind byte
	body []byte
	done chan struct{} // closed once resp, sent and err are set
	resp []byte        // the leader's response frame: status, body
	sent bool          // the request may have reached the leader
	err  error         // the connection's failure; resp is unset
}

// fqueue is the calls waiting to go to one address, and its lanes.
type fqueue struct {
	calls []*fcall
	lanes int
}

// enqueue queues fc for addr and starts a lane when fewer than
// forwardLanes are running.
func (f *forwarder) enqueue(addr string, fc *fcall) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errTransportClosed
	}
	q := f.queues[addr]
	if q == nil {
		q = &fqueue{}
		f.queues[addr] = q
	}
	q.calls = append(q.calls, fc)
	if q.lanes < forwardLanes {
		q.lanes++
		f.wg.Add(1)
		go f.lane(addr, q)
	}
	return nil
}

// lane sends the calls queued for addr, a batch at a time on one
// connection, until none is left or the forwarder closes.
func (f *forwarder) lane(addr string, q *fqueue) {
	defer f.wg.Done()
	var c *fconn
	for {
		f.mu.Lock()
		closed := f.closed
		batch := q.take(closed)
		if len(batch) == 0 || closed {
			q.lanes--
			if q.lanes == 0 && len(q.calls) == 0 && f.queues[addr] == q {
				delete(f.queues, addr)
			}
			f.mu.Unlock()
			finish(batch, nil, false, errTransportClosed)
			if c != nil {
				f.put(addr, c)
			}
			return
		}
		f.mu.Unlock()
		c = f.exchange(addr, c, batch)
	}
}

// take removes and returns the calls of the next batch (all of them when
// all is set); a call whose context ended is answered and left out.
func (q *fqueue) take(all bool) []*fcall {
	var (
		batch []*fcall
		size  int
		i     int
	)
	for i = 0; i < len(q.calls); i++ {
		fc := q.calls[i]
		if !all && (len(batch) == maxForwardBatch || (len(batch) > 0 && size+len(fc.body) > maxForwardBytes)) {
			break
		}
		q.calls[i] = nil
		if err := fc.ctx.Err(); err != nil && !all {
			fc.err = err
			close(fc.done)
			continue
		}
		batch = append(batch, fc)
		size += len(fc.body)
	}
	q.calls = q.calls[i:]
	if len(q.calls) == 0 {
		q.calls = nil // let the backing array go
	}
	return batch
}

// finish answers every call of batch with resp, or with err.
func finish(batch []*fcall, resp []byte, sent bool, err error) {
	for _, fc := range batch {
		fc.resp, fc.sent, fc.err = resp, sent, err
		close(fc.done)
	}
}

// exchange sends batch to addr on c (a connection from the pool when nil)
// and answers its calls. It returns the connection, or nil when it failed.
func (f *forwarder) exchange(addr string, c *fconn, batch []*fcall) *fconn {
	if c == nil {
		var err error
		if c, err = f.get(addr); err != nil {
			finish(batch, nil, false, err)
			return nil
		}
	}
	var (
		deadline time.Time
		frame    []byte
	)
	for _, fc := range batch {
		dl, ok := fc.ctx.Deadline()
		if !ok {
			deadline = time.Time{}
			break
		}
		if dl.After(deadline) {
			deadline = dl
		}
	}
	if len(batch) == 1 {
		frame = requestFrame(nil, batch[0])
	} else {
		frame = binary.AppendUvarint([]byte{reqBatch, 0}, uint64(len(batch)))
		for _, fc := range batch {
			sub := requestFrame(nil, fc)
			frame = binary.AppendUvarint(frame, uint64(len(sub)))
			frame = append(frame, sub...)
		}
	}
	_ = c.conn.SetDeadline(deadline)
	if err := writeFrame(c.w, frame); err != nil {
		f.drop(c)
		finish(batch, nil, true, err)
		return nil
	}
	resp, err := readFrame(c.r)
	if err != nil {
		f.drop(c)
		finish(batch, nil, true, err)
		return nil
	}
	if len(batch) == 1 {
		finish(batch, resp, true, nil)
		return c
	}
	resps, err := splitBatch(resp, len(batch))
	if err != nil {
		f.drop(c)
		finish(batch, nil, true, err)
		return nil
	}
	for i, fc := range batch {
		fc.resp, fc.sent = resps[i], true
		close(fc.done)
	}
	return c
}

// requestFrame appends fc's request frame: its kind, the time its context
// leaves (0 for none) and its body.
func requestFrame(buf []byte, fc *fcall) []byte {
	var timeout time.Duration
	if dl, ok := fc.ctx.Deadline(); ok {
		timeout = max(time.Until(dl), 1)
	}
	buf = binary.AppendVarint(append(buf, fc.kind), int64(timeout))
	return append(buf, fc.body...)
}

// splitBatch returns the n responses of a batch's response frame. A
// response that is an error, not a batch (a leader that refused the batch
// whole), answers every call.
func splitBatch(resp []byte, n int) ([][]byte, error) {
	d := decoder{buf: resp}
	if d.byte() != respOK {
		out := make([][]byte, n)
		for i := range out {
			out[i] = resp
		}
		return out, nil
	}
	if d.uvarint() != uint64(n) {
		return nil, errCorrupt
	}
	out := make([][]byte, n)
	for i := range out {
		out[i] = d.raw(d.uvarint())
	}
	if d.err != nil || len(d.buf) != 0 {
		return nil, errCorrupt
	}
	return out, nil
}

// get returns an idle connection to addr that is still open, or a new one.
func (f *forwarder) get(addr string) (*fconn, error) {
	for {
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return nil, errTransportClosed
		}
		idle := f.idle[addr]
		if len(idle) == 0 {
			f.mu.Unlock()
			break
		}
		c := idle[len(idle)-1]
		f.idle[addr] = idle[:len(idle)-1]
		f.mu.Unlock()
		if alive(c) {
			return c, nil
		}
		f.drop(c)
	}
	f.dials.Add(1)
	conn, err := f.stream.dial(f.ctx, addr, streamForward, dialTimeout)
	if err != nil {
		return nil, err
	}
	c := &fconn{conn: conn, r: bufio.NewReader(conn), w: bufio.NewWriter(conn)}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		_ = conn.Close()
		return nil, errTransportClosed
	}
	f.open[c] = struct{}{}
	return c, nil
}

// drop closes c and forgets it.
func (f *forwarder) drop(c *fconn) {
	_ = c.conn.Close()
	f.mu.Lock()
	delete(f.open, c)
	f.mu.Unlock()
}

// alive reports whether an idle connection is still open: the leader
// sends nothing unasked, so a read that times out at once finds it open,
// and one that returns finds it closed.
func alive(c *fconn) bool {
	if c.r.Buffered() > 0 {
		return false
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	_, err := c.r.Peek(1)
	_ = c.conn.SetReadDeadline(time.Time{})
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (f *forwarder) put(addr string, c *fconn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || len(f.idle[addr]) >= maxIdle {
		_ = c.conn.Close()
		delete(f.open, c)
		return
	}
	f.idle[addr] = append(f.idle[addr], c)
}

// close ends every connection, idle or in use: a call under way fails.
// It returns when every lane has.
func (f *forwarder) close() {
	f.mu.Lock()
	f.closed = true
	f.cancel()
	for c := range f.open {
		_ = c.conn.Close()
	}
	f.idle, f.open = nil, nil
	f.mu.Unlock()
	f.wg.Wait()
}

// serveForward serves the calls a follower forwards on one connection,
// one at a time, until it closes or the node does. The calls are this
// node's own, without forwarding: a node that does not lead says so, and
// the follower tries the next leader.
func (n *Node) serveForward(conn net.Conn) {
	r, w := bufio.NewReader(conn), bufio.NewWriter(conn)
	for {
		frame, err := readFrame(r)
		if err != nil {
			return
		}
		var resp []byte
		if len(frame) > 0 && frame[0] == reqBatch {
			resp = n.serveBatch(frame)
		} else {
			resp = n.serveFrame(frame)
		}
		if err := writeFrame(w, resp); err != nil {
			return
		}
	}
}

// serveBatch serves the requests of a batch frame (reqBatch, a timeout
// byte, a uvarint count, then each request frame with its uvarint
// length), all at once, so that the writes among them reach the batcher
// together, and encodes their answers as one frame: respOK, the count,
// then each answer with its uvarint length.
func (n *Node) serveBatch(frame []byte) []byte {
	if len(frame) < 2 {
		return appendError(nil, errCorrupt)
	}
	d := decoder{buf: frame[2:]}
	count := d.uvarint()
	if d.err != nil || count == 0 || count > maxForwardBatch {
		return appendError(nil, errCorrupt)
	}
	subs := make([][]byte, count)
	for i := range subs {
		subs[i] = d.raw(d.uvarint())
		if len(subs[i]) > 0 && subs[i][0] == reqBatch {
			d.fail()
		}
	}
	if d.err != nil || len(d.buf) != 0 {
		return appendError(nil, errCorrupt)
	}
	resps := make([][]byte, count)
	var wg sync.WaitGroup
	for i, sub := range subs {
		wg.Go(func() { resps[i] = n.serveFrame(sub) })
	}
	wg.Wait()
	out := binary.AppendUvarint([]byte{respOK}, count)
	for _, r := range resps {
		out = binary.AppendUvarint(out, uint64(len(r)))
		out = append(out, r...)
	}
	return out
}

// serveFrame serves one forwarded request and encodes its answer.
func (n *Node) serveFrame(frame []byte) []byte {
	d := decoder{buf: frame}
	kind := d.byte()
	timeout := time.Duration(d.varint())
	if d.err != nil {
		return appendError(nil, errCorrupt)
	}
	if n.onServe != nil {
		n.onServe(n, kind, d.buf)
	}
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var a answer
	switch kind {
	case reqWrite:
		c, err := decodeCommand(d.buf)
		if err != nil {
			return appendError(nil, err)
		}
		r := n.submit(ctx, c)
		a = answer{lease: r.lease, ok: r.ok, err: r.err}
	case reqMember:
		op := memberOp(d.byte())
		id, address := d.string(), d.string()
		if d.err != nil || len(d.buf) != 0 {
			return appendError(nil, errCorrupt)
		}
		a.err = n.memberHere(ctx, op, id, address)
	case reqRead:
		q := decodeQuery(&d)
		if d.err != nil || len(d.buf) != 0 {
			return appendError(nil, errCorrupt)
		}
		a = n.readHere(ctx, &q)
	case reqClaim:
		a = n.serveClaim(ctx, d.buf)
	default:
		return appendError(nil, errCorrupt)
	}
	if a.err != nil {
		return appendError(nil, a.err)
	}
	return appendAnswer(nil, &a)
}
