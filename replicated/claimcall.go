package replicated

import (
	"context"
	"time"

	"github.com/leasehold/lease/claim"
)

// A claim store call travels in the encoding of claimcodec.go: in the log
// (a command of op opClaim, whose value is the call), and to the leader
// when a follower forwards it (a frame of kind reqClaim, answered with the
// reply). The JSON tags below are those of the JSON that release 0.1.0
// wrote into its logs, which nodes still apply.

// claimOp names a claim store call.
type claimOp string

// The calls. Writes go through the log; reads are served by the leader
// from its Memory after a read barrier.
const (
	callEnqueue      claimOp = "enqueue"
	callClaim        claimOp = "claim"
	callExtend       claimOp = "extend"
	callSettle       claimOp = "settle"
	callCancel       claimOp = "cancel"
	callRequeueDead  claimOp = "requeue_dead"
	callDeleteDead   claimOp = "delete_dead"
	callRetryNow     claimOp = "retry_now"
	callPause        claimOp = "pause"
	callResume       claimOp = "resume"
	callClean        claimOp = "clean"
	callSetRetention claimOp = "set_retention"
	callLookup       claimOp = "lookup"
	callList         claimOp = "list"
	callCounts       claimOp = "counts"
	callQueues       claimOp = "queues"
)

// isRead reports whether op only reads.
func (op claimOp) isRead() bool {
	switch op {
	case callLookup, callList, callCounts, callQueues:
		return true
	}
	return false
}

// resendable reports whether a write of op that may have been applied is
// safe to send again: a settlement is conditional on its claim being live,
// which the first one ends, and an extension extends again.
func (op claimOp) resendable() bool { return op == callSettle || op == callExtend }

// claimCall is one call and its arguments.
type claimCall struct {
	Op         claimOp
	Items      []claim.NewItem   `json:",omitempty"`
	Request    *claimRequest     `json:",omitempty"`
	Ref        claim.Ref         `json:",omitzero"`
	Lease      time.Duration     `json:",omitempty"`
	Settlement *claim.Settlement `json:",omitempty"`
	Queue      string            `json:",omitempty"`
	ID         claim.ItemID      `json:",omitempty"`
	Limit      int               `json:",omitempty"`
	Retention  *claim.Retention  `json:",omitempty"`
	Query      *claim.Query      `json:",omitempty"`
	QueueQuery *claim.QueueQuery `json:",omitempty"`
}

// claimRequest is a claim.ClaimRequest without its Lost function, which
// stays with the caller.
type claimRequest struct {
	Queue, Owner string
	Limit        int
	Lease        time.Duration
}

// claimReply is what a call returns besides its error.
type claimReply struct {
	Items  []claim.Item // nil and empty stay apart
	Item   *claim.Item  `json:",omitempty"`
	Claims []claim.Claim
	Time   time.Time    `json:",omitzero"`
	N      int          `json:",omitempty"`
	Counts claim.Counts `json:",omitzero"`
	Queues []claim.QueueInfo
}

// run makes the call on m. lost is the Lost of every claim it makes.
func (c *claimCall) run(ctx context.Context, m *claim.Memory, lost func(claim.Ref, error)) (*claimReply, error) {
	var r claimReply
	var err error
	switch c.Op {
	case callEnqueue:
		r.Items, err = m.Enqueue(ctx, c.Items)
	case callClaim:
		var q claimRequest
		if c.Request != nil {
			q = *c.Request
		}
		r.Claims, err = m.Claim(ctx, claim.ClaimRequest{Queue: q.Queue, Owner: q.Owner, Limit: q.Limit, Lease: q.Lease, Lost: lost})
	case callExtend:
		r.Time, err = m.Extend(ctx, c.Ref, c.Lease)
	case callSettle:
		var s claim.Settlement
		if c.Settlement != nil {
			s = *c.Settlement
		}
		err = m.Settle(ctx, s)
	case callCancel:
		err = m.Cancel(ctx, c.Queue, c.ID)
	case callRequeueDead:
		r.Item, err = itemOf(m.RequeueDead(ctx, c.Queue, c.ID))
	case callDeleteDead:
		err = m.DeleteDead(ctx, c.Queue, c.ID)
	case callRetryNow:
		r.Item, err = itemOf(m.RetryNow(ctx, c.Queue, c.ID))
	case callPause:
		err = m.Pause(ctx, c.Queue)
	case callResume:
		err = m.Resume(ctx, c.Queue)
	case callClean:
		r.N, err = m.Clean(ctx, c.Limit)
	case callSetRetention:
		var ret claim.Retention
		if c.Retention != nil {
			ret = *c.Retention
		}
		err = m.SetRetention(ret)
	case callLookup:
		r.Item, err = itemOf(m.Lookup(ctx, c.ID))
	case callList:
		var q claim.Query
		if c.Query != nil {
			q = *c.Query
		}
		r.Items, err = m.List(ctx, q)
	case callCounts:
		r.Counts, err = m.Counts(ctx, c.Queue)
	case callQueues:
		var q claim.QueueQuery
		if c.QueueQuery != nil {
			q = *c.QueueQuery
		}
		r.Queues, err = m.Queues(ctx, q)
	default:
		err = invalidOp(string(c.Op), "op", "unknown claim store call")
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

func itemOf(it claim.Item, err error) (*claim.Item, error) {
	if err != nil {
		return nil, err
	}
	return &it, nil
}
