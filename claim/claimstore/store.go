package claimstore

import (
	"context"
	"strconv"
	"time"
)

// Store holds the items and claims of a claim.Broker: the storage half of a
// work queue. The Broker keeps the policy every store shares (defaults,
// backoff, the dead-letter decision of Fail, the Work helper and
// its heartbeats); a Store keeps items, claims, attempts and dead letters,
// and the clock every deadline is measured on. The Broker never reads a
// clock for a store: it passes durations (lease for 30s, visible again
// after 2s) and the store applies them on its own clock (a lease.Service's
// time base for claim.Memory, the database's clock for a PostgreSQL store).
//
// The contract, which package claimtest checks for any store:
//
//   - An item is claimable when it is visible and due, and only then. A
//     claim hands an item to one owner until the claim's lease expires or
//     the claim is settled; while a claim is live no other claim of the
//     item exists.
//   - Claim takes claimable items of one queue in this order: lower
//     Priority first, then earlier VisibleAt, then lower ItemID. Each claim
//     counts an attempt and carries a fencing token in its Ref that no
//     earlier claim of the item had.
//   - Every call on a claim (Extend, Settle) acts only if the claim is still
//     the item's live claim; otherwise it returns an error matching
//     lease.ErrStaleUse and changes nothing. A stale heartbeat, completion
//     or failure never overwrites a newer outcome.
//   - A claim whose lease expired without being settled makes its item
//     claimable again at once, or dead if the claim was its last attempt,
//     with a Failure (Lost) in the item's history.
//   - Settle is durable when it returns nil: a store that batches
//     settlements returns only once the batch is stored.
//   - Keys: while an item with a Key exists in its queue (in any state,
//     completed and cancelled included while they are kept), Enqueue of
//     the same key returns that item and adds nothing. A new item with
//     KeyStates is blocked only by an item in one of those states: an
//     item in another state gives its Key up (it stays, and Lookup and
//     List show it without a Key) and the new item is added with it.
//     Within one Enqueue call a key is judged once, by the first item
//     with it: the later ones get what that one found or added, whatever
//     their own KeyStates.
//   - Finished items: a store that keeps them (see Retention and Cleaner)
//     moves a completed item to Completed and a cancelled one to
//     Cancelled, with its FinishedAt; neither is ever claimable again.
//     A store that does not removes them at once.
//   - Bad input gets an error matching lease.ErrInvalidArgument that names
//     the field (*lease.Error), and nothing changes. An operation on a
//     closed store gets an error matching lease.ErrClosed. An item that
//     does not exist gets an error matching lease.ErrNotFound. The store
//     checks its input itself (with a [Checker]), once: the Broker, the
//     console and every other caller pass it through unchecked.
//   - Returned values share no memory with the store.
//
// A Store is safe for concurrent use by multiple goroutines. Its methods
// may be called from any goroutine, and calls on different items never
// wait for each other longer than the store's own work takes.
type Store interface {
	// Enqueue adds items in one step and returns them, in order. An item
	// whose Key exists in its queue is not added: the existing item is
	// returned in its place. Either every item is stored or, on error,
	// none is.
	Enqueue(ctx context.Context, items []NewItem) ([]Item, error)

	// Claim claims up to req.Limit claimable items of req.Queue for
	// req.Owner, each for req.Lease on the store's clock, and returns them
	// (an empty slice when none is claimable).
	Claim(ctx context.Context, req ClaimRequest) ([]Claim, error)

	// Extend extends the live claim r to lease from now on the store's
	// clock and returns its new expiry.
	Extend(ctx context.Context, r Ref, lease time.Duration) (time.Time, error)

	// Settle ends the live claim s.Ref as s says.
	Settle(ctx context.Context, s Settlement) error

	// Cancel cancels the item id of queue whatever its state: it is kept
	// as Cancelled or removed, as the store's retention says. If it is
	// claimed, its claim ends: later calls on it are stale, and the
	// claim's Lost function, if any, is called with a cause matching
	// ErrCancelled. An item already completed or cancelled is left as it
	// is, and Cancel returns nil.
	Cancel(ctx context.Context, queue string, id ItemID) error

	// Lookup returns the item id.
	Lookup(ctx context.Context, id ItemID) (Item, error)

	// List returns items of q.Queue in q.State (every state when zero),
	// of q.Kind (every kind when "") and with q.Tag (any when ""), with
	// IDs above q.After, in ID order, at most q.Limit of them.
	List(ctx context.Context, q Query) ([]Item, error)

	// Counts returns the numbers of items of queue in each state. An
	// unknown queue has zero counts.
	Counts(ctx context.Context, queue string) (Counts, error)

	// RequeueDead makes the dead item id of queue visible at once with no
	// attempts used; its history is kept.
	RequeueDead(ctx context.Context, queue string, id ItemID) (Item, error)

	// DeleteDead deletes the dead item id of queue, freeing its key.
	DeleteDead(ctx context.Context, queue string, id ItemID) error

	// Notify returns a channel that is closed once an item of queue may
	// have become claimable since Notify was called (an enqueue, a delay
	// ended, a claim lost or failed, a dead letter requeued), or the store
	// closed. A store that can miss a change (notifications lost on a
	// network) closes it after a bounded poll interval as well. The caller
	// calls stop when it no longer waits, whether or not ready was closed.
	Notify(queue string) (ready <-chan struct{}, stop func())

	// Close releases the store's resources. Calls under way may fail with
	// an error matching lease.ErrClosed; later calls do. Close is
	// idempotent.
	Close() error
}

// NewItem is an item to enqueue: a plain value, safe to copy and share.
type NewItem struct {
	Queue   string // required
	Payload []byte // copied by the store
	// Kind names what the item is (a job kind): stored and returned
	// with the item and its claims, and a filter of List. "" for none.
	Kind string
	// Tags label the item: stored and returned with it and its claims,
	// and a filter of List. At most MaxTags, each 1 to MaxTagLen bytes;
	// copied by the store.
	Tags []string
	// Metadata is stored and returned with the item and its claims as it
	// is (copied); the store does not read it.
	Metadata []byte
	// Key, when not empty, makes the enqueue idempotent (see Store).
	Key string
	// KeyStates, when not empty, are the states in which an existing item
	// with the same Key blocks this one; an item in any other state gives
	// the Key up to this one (see Store). Empty means every state. Each
	// is one of the States; only with a Key. Copied by the store.
	KeyStates []State
	// Delay makes the item claimable Delay after it is stored.
	Delay time.Duration
	// MaxAttempts is how many claims the item gets; at least 1 when it
	// reaches Store.Enqueue. A zero gets the default (see WithDefaults)
	// from the Broker, and from a store's enqueue in the caller's
	// transaction (the postgres ClaimStore's EnqueueTx).
	MaxAttempts int
	// Priority orders claims: lower first, from 0 to MaxPriority.
	Priority int
	// Timeout, when positive, bounds each run of the item's Work handler.
	// It is at most MaxTimeout: a larger one is bad input, refused by
	// every store (Checker.NewItem), as a negative one is.
	Timeout time.Duration
}

// The limits on an item's tags, which every store applies: at most MaxTags
// tags, each 1 to MaxTagLen bytes. A tag beyond them is refused with an
// error matching lease.ErrInvalidArgument whose Field names it
// ("tags", or "tags[2]"; "items[i].tags[2]" in a batch).
const (
	MaxTags   = 20
	MaxTagLen = 255
)

// DefaultMaxAttempts is the number of claims an item gets before a failure
// or a lost claim dead-letters it, when neither its enqueue nor its
// claim.Broker says otherwise (NewItem.WithDefaults).
const DefaultMaxAttempts = 25

// WithDefaults returns n with the defaults of an enqueue filled in, the
// same whichever way the item is enqueued (claim.Broker's Enqueue and
// EnqueueMany, or a store's enqueue in the caller's transaction such as
// the postgres ClaimStore's EnqueueTx): a MaxAttempts of 0 becomes
// maxAttempts, the Broker's default (claim.WithMaxAttempts), or
// DefaultMaxAttempts when maxAttempts is not positive (a store has no
// Broker). The other fields' zero values are their defaults. n's slices
// are shared, not copied.
func (n NewItem) WithDefaults(maxAttempts int) NewItem {
	if n.MaxAttempts == 0 {
		n.MaxAttempts = maxAttempts
		if maxAttempts <= 0 {
			n.MaxAttempts = DefaultMaxAttempts
		}
	}
	return n
}

// MaxPriority is the largest Priority an item may have.
const MaxPriority = 9

// MaxTimeout is the largest Timeout an item may have, about 292 years: the
// largest time.Duration that is a whole number of microseconds, the
// precision a store may keep durations in (the PostgreSQL store does), so
// that every store gives the timeout back as it was given, never wrapped
// around to a negative one.
const MaxTimeout = time.Duration(1<<63-1) / time.Microsecond * time.Microsecond

// ClaimRequest asks a Store for claims: the argument of Store.Claim, for
// store implementations (users call Broker.Claim or Broker.Work, which
// build it). It is a plain value, safe to copy and share.
type ClaimRequest struct {
	Queue string        // required
	Owner string        // required
	Limit int           // at least 1
	Lease time.Duration // positive
	// Lost, when not nil, is called by a store that learns at once that a
	// claim of this request ended other than by its own Settle (its lease
	// expired or was revoked, the item was cancelled), with the claim's Ref
	// and why, before the item can be claimed again. A store that only
	// learns of it when a later call on the claim is refused does not call
	// it. It is called at most once per claim, possibly with the store's
	// lock held: it must return quickly and must not call the store.
	Lost func(r Ref, cause error)
}

// Ref identifies one claim of one item: the item and the claim's fencing
// token, which no other claim of the item has. It is a comparable value,
// safe to copy and share. The zero Ref refers to nothing. In the memory
// store the token is the ID of the lease backing the claim.
type Ref struct {
	Item  ItemID
	Token uint64
}

// Settlement says how to end a live claim: the argument of Store.Settle,
// for store implementations (users call Broker.Complete, Fail or Snooze,
// which build it). It is a plain value, safe to copy and share.
type Settlement struct {
	Ref Ref
	How Settle
	// After is the delay before the item is claimable again, for
	// SettleRetry and SettleSnooze; not negative.
	After time.Duration
	// Reason is kept in the item's history for SettleRetry and SettleDead.
	Reason string
}

// Settle is how a claim ends, in a Settlement, for store implementations: a
// plain value, safe to share.
type Settle uint8

// The ways to settle a claim.
const (
	// SettleComplete completes the item: it is kept as Completed for
	// the store's retention, or removed.
	SettleComplete Settle = iota + 1
	// SettleRetry records a failure and makes the item claimable again
	// after Settlement.After.
	SettleRetry
	// SettleDead records a failure and moves the item to the dead letters.
	SettleDead
	// SettleSnooze makes the item claimable again after Settlement.After
	// without spending an attempt and without a failure in its history.
	SettleSnooze
)

// String returns "complete", "retry", "dead" or "snooze".
func (s Settle) String() string {
	switch s {
	case SettleComplete:
		return "complete"
	case SettleRetry:
		return "retry"
	case SettleDead:
		return "dead"
	case SettleSnooze:
		return "snooze"
	}
	return "Settle(" + strconv.Itoa(int(s)) + ")"
}

// Query selects items to List. It is a plain value, safe to copy and share.
type Query struct {
	Queue string // required
	State State  // zero for every state
	Kind  string // only items of this Kind; "" for every kind
	Tag   string // only items with this tag; "" for every item
	After ItemID // only IDs above this
	Limit int    // at least 1
}
