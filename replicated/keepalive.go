package replicated

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/leasehold/lease"
)

// keepAlive is one KeepAlive of this node: a goroutine that renews the lease
// through the cluster every TTL/3 of real time.
type keepAlive struct {
	id     lease.ID
	cancel context.CancelCauseFunc // ends the context handed out
	ended  chan struct{}           // closed when the node applies the lease's end
	cause  error                   // why it ended; set before ended is closed
}

// keepAliveRetry is how soon a keep-alive tries again after a renewal that
// failed for want of a leader.
const keepAliveRetry = 50 * time.Millisecond

// KeepAlive renews the lease now and then every TTL/3 until ctx is done or
// the lease ends, like lease.Service.KeepAlive: the returned context is done
// when either happens, and context.Cause tells which (ctx's own cause, or an
// error matching lease.ErrExpired, lease.ErrAlreadyRevoked or
// lease.ErrClosed). Renewals are commits, made by one goroutine of this node
// per keep-alive on its real clock; a renewal that finds no leader is tried
// again shortly, and the lease may expire meanwhile if no leader is elected
// within its TTL. Once the returned context is done no renewal of this
// keep-alive is made. It carries ctx's values and deadline. It fails like
// Renew when the lease is not active.
func (n *Node) KeepAlive(ctx context.Context, id lease.ID) (context.Context, error) {
	const op = "keepalive"
	l, err := n.Renew(ctx, id)
	if err != nil {
		return nil, err
	}
	kctx, cancel := context.WithCancelCause(parentDeadline{context.WithoutCancel(ctx), ctx})
	ka := &keepAlive{id: id, cancel: cancel, ended: make(chan struct{})}
	n.kaMu.Lock()
	select {
	case <-n.closing:
		n.kaMu.Unlock()
		cancel(closedError(op))
		return nil, closedError(op)
	default:
	}
	if n.kas == nil {
		n.kas = make(map[lease.ID][]*keepAlive)
	}
	n.kas[id] = append(n.kas[id], ka)
	n.kaWG.Add(1)
	n.kaMu.Unlock()
	go n.keepAlive(ctx, ka, l.TTL)
	return kctx, nil
}

// parentDeadline is a context that reports its parent's deadline while
// ignoring its cancellation.
type parentDeadline struct {
	context.Context
	parent context.Context
}

func (c parentDeadline) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// keepAlive renews ka's lease until ctx is done, the lease ends or the node
// closes, and then ends the context handed out.
func (n *Node) keepAlive(ctx context.Context, ka *keepAlive, ttl time.Duration) {
	defer n.kaWG.Done()
	defer n.dropKeepAlive(ka)
	timer := time.NewTimer(interval(ttl))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			ka.cancel(context.Cause(ctx))
			return
		case <-ka.ended:
			ka.cancel(ka.cause)
			return
		case <-n.closing:
			ka.cancel(closedError("keepalive"))
			return
		case <-timer.C:
		}
		// Not cancelled with ctx: a renewal is waited for to its outcome,
		// so that none lands after the returned context is done. The node
		// answers every command it queued, by Close at the latest.
		l, err := n.Renew(context.WithoutCancel(ctx), ka.id)
		var le *lease.Error
		switch {
		case err == nil:
			ttl = l.TTL
			timer.Reset(interval(ttl))
		case errors.As(err, &le):
			ka.cancel(err) // the lease ended, or the node closed
			return
		default:
			timer.Reset(min(keepAliveRetry, interval(ttl))) // no leader for the moment
		}
	}
}

func interval(ttl time.Duration) time.Duration { return max(ttl/3, time.Millisecond) }

// dropKeepAlive forgets ka.
func (n *Node) dropKeepAlive(ka *keepAlive) {
	n.kaMu.Lock()
	defer n.kaMu.Unlock()
	kas := slices.DeleteFunc(n.kas[ka.id], func(k *keepAlive) bool { return k == ka })
	if len(kas) == 0 {
		delete(n.kas, ka.id)
	} else {
		n.kas[ka.id] = kas
	}
}

// endKeepAlives tells the keep-alives of a lease the node saw end why it
// ended.
func (n *Node) endKeepAlives(id lease.ID, reason lease.EndReason) {
	n.kaMu.Lock()
	defer n.kaMu.Unlock()
	code := lease.CodeExpired
	if reason == lease.EndRevoked {
		code = lease.CodeAlreadyRevoked
	}
	for _, ka := range n.kas[id] {
		select {
		case <-ka.ended:
		default:
			ka.cause = &lease.Error{Code: code, Op: "keepalive", LeaseID: id}
			close(ka.ended)
		}
	}
}
