// Package claim is an in-process work queue whose claims are leases.
//
// A [Broker] holds named queues of items. A worker (an owner) claims visible
// items for a lease duration; each [Claim] is backed by a lease of the
// underlying lease.Service, held by the owner with purpose lease.Operation.
// While the owner works it sends heartbeats to extend the claim, then
// completes the item (removed for good) or fails it (requeued with
// exponential backoff, or dead-lettered once it has used its attempts). A
// claim whose lease expires without a heartbeat returns its item to the
// queue, visible at once, and every later call with the stale claim is
// rejected with an error matching lease.ErrStaleUse.
//
// Delivery is at least once: an item is handed out again when a claim is
// lost, never while a claim on it is live. [Broker.Work] runs a handler on a
// queue with concurrent workers that heartbeat, complete and fail for you.
//
// The semantics follow the Squidie.Executor.Leases behaviour (claim,
// heartbeat, complete, fail); docs/claims.md has the state diagram, the
// backoff formula and the design choices.
package claim
