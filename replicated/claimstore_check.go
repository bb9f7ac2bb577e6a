package replicated

import (
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
)

// claimChecks are the Store contract's input checks, under this package's
// name. The node that takes a call checks it before anything is logged:
// bad input costs no round trip and no log entry, and every node would
// refuse it alike anyway.
var claimChecks = claimstore.Checker{Package: "replicated"}

// checkCall refuses c's bad input as the memory store would, naming the
// field; nil when c may go to the log.
func checkCall(c *claimCall) error {
	op := string(c.Op)
	switch c.Op {
	case callEnqueue:
		return claimChecks.NewItems(op, c.Items)
	case callClaim:
		r := c.Request
		return claimChecks.ClaimRequest(op, claim.ClaimRequest{Queue: r.Queue, Owner: r.Owner, Limit: r.Limit, Lease: r.Lease})
	case callExtend:
		return claimChecks.Extend(op, c.Ref, c.Lease)
	case callSettle:
		return claimChecks.Settlement(op, *c.Settlement)
	case callCancel, callRequeueDead, callDeleteDead, callRetryNow:
		return claimChecks.Item(op, c.Queue, c.ID)
	case callPause, callResume, callCounts:
		return claimChecks.Name(op, "queue", c.Queue)
	case callClean:
		return claimChecks.Limit(op, c.Limit)
	case callSetRetention:
		return c.Retention.Check()
	case callLookup:
		return claimChecks.ID(op, c.ID)
	case callList:
		return claimChecks.Query(op, *c.Query)
	case callQueues:
		return claimChecks.QueueQuery(op, *c.QueueQuery)
	}
	return nil
}
