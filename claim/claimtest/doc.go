// Package claimtest checks that a claimstore.Store keeps the store contract, in
// the manner of testing/fstest.TestFS: a store's own tests call [TestStore]
// with a factory, and every clause of the contract runs as a subtest on a
// fresh store. Whoever writes a store (on Redis, on SQLite, on anything)
// runs the same suite the memory and PostgreSQL stores run:
//
//	func TestStore(t *testing.T) {
//		claimtest.TestStore(t, func(t *testing.T, r claimstore.Retention) (claimstore.Store, lease.Clock) {
//			clock := leasetest.NewFakeClock(time.Now())
//			s := newMyStore(clock, r)
//			t.Cleanup(func() { _ = s.Close() })
//			return s, clock
//		})
//	}
//
// What the suite checks, clause by clause: bad input to every method and
// every field is refused with a *lease.Error of code
// lease.CodeInvalidArgument naming the field, and changes nothing; an
// item's Timeout comes back as given up to claim.MaxTimeout, and a larger
// one is bad input; items
// are claimable when visible and due, and only then; Claim takes them by
// priority, then VisibleAt, then ID, up to its limit; a claim's lease is
// kept by Extend and ends at its expiry, after which the item is claimable
// again (or dead on its last attempt) with a lost failure in its history;
// every call with a claim that is no longer live is refused with
// lease.ErrStaleUse and changes nothing; the four settlements (complete,
// retry, dead, snooze) do what they say and snooze spends no attempt;
// dead letters are requeued and deleted, and other items get
// claim.ErrNotFound; keys make Enqueue idempotent while their item exists;
// Cancel removes an item in any state and ends its claim; List, Lookup and
// Counts agree with the items; Notify wakes a waiter when an item may have
// become claimable; returned values share no memory with the store; calls
// after Close fail with lease.ErrClosed; concurrent claimers get each item
// exactly once, and while leases expire under them no call on a claim
// succeeds once a later claim of its item was handed out; and a history of concurrent calls is linearizable against
// a sequential model of the contract (checked with
// github.com/anishathalye/porcupine, which test binaries importing this
// package therefore link).
//
// Kinds, tags and metadata are checked by TestStore too, and so are the
// optional interfaces, each by clauses that a store without it skips,
// saying which interface it does not implement: a claimstore.Cleaner
// (finished items kept as completed or cancelled for the retention the
// factory is given, then removed by Clean, oldest first and in bounded
// batches; the zero retention keeps nothing), a claimstore.Pauser and
// claimstore.QueueLister (a paused queue hands out nothing while enqueues
// go on, Resume wakes its waiters, Queues lists names, counts and pauses in
// order), a claimstore.Retrier (RetryNow makes a delayed item claimable at
// once, keeps its attempts and history, and finds no item in another
// state) and a claimstore.TimeBase (its Clock is the one its claims expire
// on). TestStore returns the capabilities it exercised.
//
// Time. The factory returns the clock the store measures deadlines on. When
// it is a leasetest.Advancer (a *leasetest.FakeClock) the suite drives time with
// it, to the nanosecond: an item with a delay is not claimable a nanosecond
// before its VisibleAt and is at it, a claim is live a nanosecond before
// its ExpiresAt and lost at it. Otherwise (a PostgreSQL store, whose clock
// is the database's) the suite uses leases and delays of about a second,
// waits them out in real time with a quarter second of slack, checks times
// within that slack and scales its counts down: about 20 s in all, well
// under 40 s. On a real clock the Linearizable clause lets a claim take any
// claimable items, or fewer than it could, as a claim from a snapshot or
// one that skips locked rows does; the order and count of claims are then
// checked one call at a time only.
//
// [FuzzStore] is a fuzz target for the same contract: it decodes the fuzzer's
// bytes into calls and steps of a fake clock, runs them on a store and on
// the model, and compares every result. It needs a *leasetest.FakeClock.
package claimtest
