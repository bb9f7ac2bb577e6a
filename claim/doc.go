// Package claim is an in-process work queue whose claims are leases.
//
// A [Broker] holds named queues of items. A worker (an owner) claims visible
// items for a lease duration; each [Claim] is backed by a lease of the
// underlying lease.Service, held by the owner with purpose lease.Operation.
// While the owner works it sends heartbeats to extend the claim, then
// completes the item (removed for good) or fails it (requeued with
// exponential backoff, or dead-lettered once it has used its attempts). A
// claim whose lease expires without a heartbeat, or is revoked through the
// service, returns its item to the queue, visible at once, and every later
// call with the stale claim is rejected with an error matching
// lease.ErrStaleUse.
//
// Delivery is at least once: an item is handed out again when a claim is
// lost, never while a claim on it is live. [Broker.Work] runs a handler on a
// queue with concurrent workers that heartbeat, complete and fail for you,
// and cancels a handler's context, with a cause matching [ErrClaimLost], as
// soon as its claim is lost and before the item can be claimed again.
//
// Time. The Broker reads time only from the service's Clock, the service's
// one time base, which never runs backwards: when the wall clock steps back,
// time stands still for the service and the Broker alike until the clock
// catches up, so both always agree on whether a claim is live.
//
// Panics. A panicking user callback (a Work handler, the jitter function)
// is recovered and reported to the handler set by [WithPanicHandler]
// (lease.LogPanic by default), and the Broker goes on as if the callback
// had returned: the handler's item is failed, the jitter is skipped.
//
// Memory follows the items held, not the most ever held: a drained queue is
// freed, and the arrays and maps that grew for a peak shrink once the load
// has fallen to a quarter of it.
//
// The semantics follow the Squidie.Executor.Leases behaviour (claim,
// heartbeat, complete, fail); docs/claims.md has the state diagram, the
// backoff formula and the design choices.
package claim
