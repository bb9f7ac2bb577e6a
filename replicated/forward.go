package replicated

import (
	"context"
	"net"
)

// forwarder sends calls a follower cannot serve to the leader.
type forwarder struct{ n *Node }

// forwardable reports whether a call that failed with err on this node
// goes to the leader instead.
func (n *Node) forwardable(err error) (*forwarder, bool) { return nil, false }

func (f *forwarder) read(ctx context.Context, q *query) answer { return answer{} }

func (n *Node) serveForward(c net.Conn) {}
