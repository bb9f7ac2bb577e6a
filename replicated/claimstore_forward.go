package replicated

import (
	"context"
	"errors"

	"github.com/hashicorp/raft"
)

// reqClaim is the forwarding frame of a claim store call: its body is the
// encoded call (see claimcodec.go), and a successful answer carries the
// encoded reply in its value.
const reqClaim byte = 'C'

// claimCall makes a claim store call on the leader: through the log for a
// write, as a linearizable read otherwise, forwarded when this node does
// not lead.
func (n *Node) claimCall(ctx context.Context, c *claimCall) (*claimReply, error) {
	if n.fwd != nil && n.raft.State() != raft.Leader {
		// A follower's call goes to the leader at once (forward serves it
		// here if this node leads by then).
		return n.fwd.claim(ctx, c)
	}
	rep, err := n.claimHere(ctx, c)
	if f, ok := n.forwardable(err); ok {
		return f.claim(ctx, c)
	}
	return rep, err
}

// claimHere makes the call on this node, which must lead.
func (n *Node) claimHere(ctx context.Context, c *claimCall) (*claimReply, error) {
	if !c.Op.isRead() {
		r := n.submit(ctx, command{op: opClaim, value: encodeClaimCall(c)})
		return r.claim, r.err
	}
	op := string(c.Op)
	if err := n.readable(ctx, op); err != nil {
		return nil, err
	}
	if err := n.readBarrier(ctx, op); err != nil {
		return nil, err
	}
	return n.claimLocal(ctx, c)
}

// claimLocal serves a read from this node's own queues.
func (n *Node) claimLocal(ctx context.Context, c *claimCall) (*claimReply, error) {
	for {
		st := n.fsm.state.Load()
		rep, err := c.run(ctx, st.claims.mem, nil)
		select {
		case <-n.closing:
			return nil, closedError(string(c.Op))
		default:
		}
		if n.fsm.state.Load() == st {
			return rep, err
		}
		// A snapshot restore replaced the queues meanwhile: read the new ones.
	}
}

func (f *forwarder) claim(ctx context.Context, c *claimCall) (*claimReply, error) {
	req := append([]byte{reqClaim, 0}, encodeClaimCall(c)...)
	a, err := f.call(ctx, string(c.Op), req, !c.Op.isRead(), c.Op.resendable(), func() (answer, bool) {
		rep, err := f.n.claimHere(ctx, c) // this node became leader meanwhile
		return answer{value: encodeReply(rep), err: err}, !errors.Is(err, ErrNotLeader)
	})
	if err != nil {
		return nil, err
	}
	if a.err != nil {
		return nil, a.err
	}
	return decodeReply(a.value)
}

// serveClaim serves a forwarded claim store call on this node. A write's
// body, the encoded call, goes into the log as it came: every node decodes
// it there, and a body that does not decode fails alike on every node.
func (n *Node) serveClaim(ctx context.Context, body []byte) answer {
	op, err := peekClaimOp(body)
	if err != nil {
		return answer{err: err}
	}
	if !op.isRead() {
		r := n.submit(ctx, command{op: opClaim, value: body})
		return answer{value: encodeReply(r.claim), err: r.err}
	}
	c, err := decodeClaimCall(body)
	if err != nil {
		return answer{err: err}
	}
	rep, err := n.claimHere(ctx, c)
	return answer{value: encodeReply(rep), err: err}
}
