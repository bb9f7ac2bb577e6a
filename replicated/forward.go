package replicated

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"slices"
	"sync"
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
	mu     sync.Mutex
	idle   map[string][]*fconn // by address
	open   map[*fconn]struct{} // every connection, idle or in use
	closed bool
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
	a, err := f.call(ctx, op, req, true, func() (answer, bool) {
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
	a, err := f.call(ctx, q.op.String(), req, false, func() (answer, bool) {
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
	a, err := f.call(ctx, op.String(), req, true, func() (answer, bool) {
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
func (f *forwarder) call(ctx context.Context, op string, req []byte, isWrite bool, here func() (answer, bool)) (answer, error) {
	wait := time.NewTimer(forwardWait)
	defer wait.Stop()
	body := req[2:]
	for {
		id, addr := f.n.Leader()
		switch {
		case addr == "" && f.n.outside():
			return answer{}, f.n.notLeader(op) // removed: no leader will come
		case id == f.n.id:
			if a, ok := here(); ok {
				return a, nil
			}
		case addr != "":
			a, sent, err := f.roundTrip(ctx, op, addr, req[0], body)
			switch {
			case err == nil:
				return a, nil
			case ctx.Err() != nil:
				return answer{}, ctx.Err()
			case errors.Is(err, errRemoteNotLeader):
				// Refused before entering the log: try the next leader.
			case isWrite && sent:
				// The leader may have applied it before it went away.
				return answer{}, uncertain(op)
			}
		}
		select {
		case <-time.After(forwardRetry):
		case <-wait.C:
			return answer{}, f.n.notLeader(op)
		case <-ctx.Done():
			return answer{}, ctx.Err()
		case <-f.n.closing:
			return answer{}, closedError(op)
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
// err.
func (f *forwarder) roundTrip(ctx context.Context, op, addr string, kind byte, body []byte) (a answer, sent bool, err error) {
	c, err := f.get(addr)
	if err != nil {
		return answer{}, false, err
	}
	var timeout time.Duration
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), 1)
		_ = c.conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	frame := binary.AppendVarint([]byte{kind}, int64(timeout))
	frame = append(frame, body...)
	sent = true
	if err := writeFrame(c.w, frame); err != nil {
		f.drop(c)
		return answer{}, sent, err
	}
	resp, err := readFrame(c.r)
	if err != nil {
		f.drop(c)
		return answer{}, sent, err
	}
	if !stop() { // the context ended: the deadline was moved
		f.drop(c)
	} else {
		_ = c.conn.SetDeadline(time.Time{})
		f.put(addr, c)
	}
	d := decoder{buf: resp}
	status := d.byte()
	if status == respOK {
		a = decodeAnswer(&d)
	} else {
		a.err = decodeError(&d, status, op)
	}
	if d.err != nil {
		return answer{}, sent, d.err
	}
	switch {
	case errors.Is(a.err, errRemoteNotLeader):
		return answer{}, false, a.err
	case errors.Is(a.err, errRemoteClosed):
		return answer{}, true, a.err
	}
	return a, sent, nil
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
	conn, err := f.stream.dial(addr, streamForward, dialTimeout)
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
func (f *forwarder) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for c := range f.open {
		_ = c.conn.Close()
	}
	f.idle, f.open = nil, nil
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
		resp := n.serveFrame(frame)
		if err := writeFrame(w, resp); err != nil {
			return
		}
	}
}

// serveFrame serves one forwarded request and encodes its answer.
func (n *Node) serveFrame(frame []byte) []byte {
	d := decoder{buf: frame}
	kind := d.byte()
	timeout := time.Duration(d.varint())
	if d.err != nil {
		return appendError(nil, errCorrupt)
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
