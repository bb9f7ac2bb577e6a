// Package claim is a work queue whose claims are leases, in two halves: a
// [Broker], the policy, over a [Store], the storage.
//
// The store checks its input (bad input gets a *lease.Error naming the
// field) and the Broker its own arguments; the Broker fills defaults ([WithMaxAttempts]), computes backoff with
// optional jitter ([Backoff], [WithJitter]), decides when a failed item is
// dead (its claim was its last attempt), applies the panic policy
// ([lease.WithPanicHandler]) and runs handlers ([Broker.Work]). The Store keeps
// items, claims, attempts and dead letters, and measures every deadline on
// its own clock; the Broker only passes it durations. [Memory], made by
// [NewMemory], is the in-process store: each claim is a lease of one
// lease.Service, held by the owner with purpose lease.Operation. The
// PostgreSQL store, postgres.ClaimStore in the postgres module, keeps them
// in a database. Create a Broker with New over a store (NewMemory(svc)); it
// owns its store.
//
// A worker (an owner) claims claimable items for a lease duration, lower
// Priority first, then earliest visible. While the owner works it sends
// heartbeats to extend the claim, then completes the item (removed for
// good), fails it (requeued with exponential backoff, or dead-lettered once
// it has used its attempts) or snoozes it (back later, no attempt spent). A
// claim whose lease expires without a heartbeat, or is revoked, returns its
// item to the queue, visible at once, and every later call with the stale
// claim is rejected with an error matching lease.ErrStaleUse. Items can be
// cancelled in any state, listed page by page ([Broker.List]) and counted.
//
// Delivery is at least once: an item is handed out again when a claim is
// lost, never while a claim on it is live. [Broker.Work] runs a handler on a
// queue: one fetcher claims a batch per round trip for the idle handlers
// and waits on [Store.Notify] (never polling) when nothing is claimable;
// each handler's claim is heartbeated; a handler's context is cancelled,
// with a cause matching [ErrClaimLost], as soon as its claim is lost and
// before the item can be claimed again (the store calls the claim's
// ClaimRequest.Lost first), or [ErrCancelled] when its item is cancelled.
// Handlers may have timeouts, and Work stops gracefully: handlers under way
// keep their context for Worker.StopTimeout after Work's context is done.
//
// Typed jobs. An item's Kind names what its payload holds. [Broker.EnqueueArgs]
// enqueues a value of an [Args] type (JSON-encoded unless it picks a
// [Codec]), and a [Workers] registry, filled with [AddWorker], routes each
// item to the handler of its kind with the value decoded. A handler
// returns [Discard] for a failure no retry mends: the item is dead-lettered
// at once; an item of an unknown kind, or whose payload does not decode, is
// too. [WithErrorHook] is told of every failed handler. [Periodic] enqueues
// the ticks of [PeriodicJob]s on a [Schedule] ([Every], or a cron
// expression parsed by the claim/cron module), each tick once across
// processes, from the leader of a lock/election election.
//
// Time. Memory reads time only from the service's Clock, the service's one
// time base, which never runs backwards: when the wall clock steps back,
// time stands still for the service and the Memory alike until the clock
// catches up, so both always agree on whether a claim is live. A Broker
// over a Memory runs Work's heartbeats and timers on that clock too.
//
// Panics. A panicking user callback (a Work handler, the jitter function,
// the error hook of [WithErrorHook]) is recovered and reported to the
// handler set by [lease.WithPanicHandler] (logged by default), and the Broker goes on as if the callback
// had returned: the handler's item is failed, the jitter is skipped.
//
// Memory follows the items held, not the most ever held: a drained queue is
// freed, and the arrays and maps that grew for a peak shrink once the load
// has fallen to a quarter of it.
//
// # Implementing a Store
//
// Most programs use Memory or a store of another module (postgres, sqlite,
// replicated) and need no more than the Broker. A new store implements
// claimstore.Store, and as it can the optional capabilities of package
// claim/claimstore (Pauser, QueueLister, Retrier, Cleaner, TimeBase): that
// package is the seam, with the types a store takes and returns (which
// this package names by aliases: [Item] is claimstore.Item) and the checks
// of its input, which every store makes, once, for every caller. Package
// claim/claimtest checks a store against the contract.
//
// docs/claims.md has the state diagram, the backoff formula, the Store
// contract and the design choices.
package claim
