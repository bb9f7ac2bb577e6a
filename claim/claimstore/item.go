package claimstore

import (
	"strconv"
	"time"
)

// ItemID identifies an item of a store. IDs are issued in increasing order
// starting at 1 and never reused; the order is the enqueue order. Like every
// integer it is safe to copy and share.
type ItemID uint64

// State is where an item is in its life, a plain value safe to share.
type State uint8

// The states of an item. A completed or cancelled item is kept in its
// state for the store's retention period (see Retention), and no longer
// exists once it is cleaned; with no retention it is removed at once.
const (
	Visible   State = iota + 1 // waiting, claimable now
	Delayed                    // waiting, claimable from its VisibleAt
	Claimed                    // held by a live claim
	Dead                       // dead-lettered: out of attempts
	Completed                  // completed, kept until cleaned
	Cancelled                  // cancelled, kept until cleaned
)

// String returns "visible", "delayed", "claimed", "dead", "completed" or
// "cancelled".
func (s State) String() string {
	switch s {
	case Visible:
		return "visible"
	case Delayed:
		return "delayed"
	case Claimed:
		return "claimed"
	case Dead:
		return "dead"
	case Completed:
		return "completed"
	case Cancelled:
		return "cancelled"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Item is a snapshot of an item. It is a plain value, safe to copy and to
// use from several goroutines: changing it changes nothing in the store.
type Item struct {
	ID          ItemID
	Queue       string
	Kind        string   // what the item is, "" when none (NewItem.Kind)
	Tags        []string // its tags, nil when none
	Metadata    []byte   // its metadata, nil when none
	Key         string   // the idempotency key, "" when none
	Payload     []byte
	State       State
	Attempts    int // claims so far (reset by RequeueDead)
	MaxAttempts int
	Priority    int
	Timeout     time.Duration // the handler timeout, 0 for none
	EnqueuedAt  time.Time
	// VisibleAt is when a visible or delayed item became or becomes
	// claimable; zero for claimed and dead items.
	VisibleAt time.Time
	DeadAt    time.Time // zero unless dead
	// FinishedAt is when a completed or cancelled item finished; zero in
	// the other states.
	FinishedAt time.Time
	// History lists the failed attempts, oldest first: failures reported
	// by Fail and claims lost because their lease ended.
	History []Failure
	// Duplicate is set in an Enqueue's result when the item's Key was
	// held (by an item of the queue, or earlier in the same batch) and
	// this is that existing item, returned in place of a new one. It is
	// false everywhere else.
	Duplicate bool
}

// Failure is one failed attempt of an item. It is a plain value, safe to
// copy and to use from several goroutines.
type Failure struct {
	Attempt int
	Owner   string
	At      time.Time
	Reason  string // Fail's reason, or "lease expired" / "lease revoked"
	// Lost is true when the claim's lease ended without Complete or Fail.
	Lost bool
}

// Counts are the numbers of items of one queue in each state. It is a plain
// value, safe to copy and to use from several goroutines.
type Counts struct {
	Visible, Delayed, Claimed, Dead int
	// Completed and Cancelled count the finished items kept for their
	// retention period.
	Completed, Cancelled int
}

// Claim is one owner's hold on one item. It is a plain value, safe to copy
// and to use from several goroutines; the Broker reads only its Ref,
// Attempt and MaxAttempts, so changing the other fields changes nothing.
// ExpiresAt is on the store's clock.
type Claim struct {
	Queue       string
	Kind        string   // the item's Kind
	Tags        []string // the item's tags
	Metadata    []byte   // the item's metadata
	Item        ItemID
	Owner       string
	Payload     []byte // a copy of the item's payload
	Attempt     int    // 1 for the first claim of the item
	MaxAttempts int    // the item's attempts in all
	Priority    int
	Timeout     time.Duration // the item's handler timeout, 0 for none
	EnqueuedAt  time.Time     // when the item was enqueued, on the store's clock
	ExpiresAt   time.Time
	Ref         Ref
}
