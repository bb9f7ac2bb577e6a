// Package claimstore is the claim-store seam: what a storage for package
// claim's work queue implements, and all it needs to do so. It never
// imports package claim: claim imports it, and names its types for users
// (claim.Item is claimstore.Item).
//
// Who imports what. A program that uses a work queue imports package claim
// (its Broker, Memory, options) and a store's package (postgres, sqlite,
// replicated); it never needs this one. A store implementation imports this
// package, and package claim/claimtest in its tests.
//
// Required. Every store implements [Store]: Enqueue, Claim, Extend, Settle,
// Cancel, Lookup, List, Counts, RequeueDead, DeleteDead, Notify and Close,
// keeping the contract its documentation states, with the value types it
// takes and returns: [NewItem], [Item] ([ItemID], [State], [Failure]),
// [Counts], [ClaimRequest], [Claim] and [Ref], [Settlement] ([Settle]),
// [Query]. Its input it checks itself, first, with a [Checker]: the store
// is where every door meets (a claim.Broker, the console, leasectl, a
// transactional enqueue), so it is the one place input is checked, and no
// caller checks it again.
//
// Optional. Each capability is an interface that embeds Store; a Broker
// finds it by type assertion and refuses (claim.ErrUnsupported) the
// operations that need one it lacks:
//
//   - [Pauser]: Pause and Resume a queue (Broker.PauseQueue, ResumeQueue).
//   - [QueueLister]: Queues lists the queues ([QueueQuery], [QueueInfo]).
//   - [Retrier]: RetryNow makes a delayed item claimable at once.
//   - [Cleaner]: Clean removes finished items whose [Retention] passed.
//   - [TimeBase]: Clock is the lease.Clock the store's deadlines are on,
//     which a Broker then runs Work's timers on.
//
// Which shipped store has which, a table that a test checks against the
// code (docs/capabilities.md shows the same):
//
//	store                  Pauser  QueueLister  Retrier  Cleaner  TimeBase
//	claim.Memory           yes     yes          yes      yes      yes
//	postgres.ClaimStore    yes     yes          yes      yes      -
//	sqlite.ClaimStore      yes     yes          yes      yes      -
//	replicated.ClaimStore  yes     yes          yes      yes      -
//
// Conformance. claimtest.TestStore runs the Store contract and then, for
// each capability the store has, that capability's clauses; it skips the
// others, saying which interface the store does not implement, and
// returns the capabilities it exercised.
//
// Checks and helpers. A [Checker] names the store's package and its own
// limits (the longest name a column holds, text that must be valid UTF-8,
// the range of its integers); its checks apply the contract's rules (a
// queue is named, [MaxPriority], [MaxTimeout], [MaxTags], [MaxTagLen], a
// Settle is one of the four) and those limits, and return a *lease.Error
// with code lease.CodeInvalidArgument whose Field names the offending
// field ("queue", "items[2].max_attempts", "ref") and whose message starts
// with the store's package:
//
//	var checks = claimstore.Checker{Package: "mystore", MaxNameLen: 1024, TextOnly: true}
//
//	func (s *Store) Claim(ctx context.Context, req claimstore.ClaimRequest) ([]claimstore.Claim, error) {
//		if err := checks.ClaimRequest("claims.claim", req); err != nil {
//			return nil, err
//		}
//		...
//	}
//
// [Checker.StaleClaim] is the error for a call on a claim that is no longer
// live, and [TagsJSON] and [ParseTagsJSON] keep an item's tags in one text
// column, as the SQL stores of this repository do.
package claimstore
