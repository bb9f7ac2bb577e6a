package claimstore

import (
	"context"
	"time"

	"github.com/leasehold/lease"
)

// Pauser is a Store whose queues can be paused: a paused queue hands out
// no claims (Claim returns an empty slice, and a Notify channel is not
// closed for it until it is resumed) while Enqueue, settlements and the
// inspection calls go on as usual. Claims made before the pause stay live.
// Resume closes the queue's Notify channels at once, so waiting workers
// claim without waiting for a poll. Pausing a paused queue, or resuming
// one that is not paused, changes nothing. A pause lasts until Resume,
// whether or not the queue has items, and for a store shared by several
// processes it holds in all of them.
type Pauser interface {
	Store
	Pause(ctx context.Context, queue string) error
	Resume(ctx context.Context, queue string) error
}

// QueueLister is a Store that lists its queues: those with items in any
// state, and the paused ones, in name order.
type QueueLister interface {
	Store
	Queues(ctx context.Context, q QueueQuery) ([]QueueInfo, error)
}

// QueueQuery selects queues to list. It is a plain value, safe to copy and
// share.
type QueueQuery struct {
	After string // only names above this, in byte order
	Limit int    // at least 1
}

// QueueInfo describes one queue. It is a plain value, safe to copy and
// share.
type QueueInfo struct {
	Name   string
	Counts Counts
	Paused bool
	// PausedAt is when the queue was paused, on the store's clock; zero
	// unless Paused.
	PausedAt time.Time
}

// Retrier is a Store that can make a waiting item claimable at once: an
// operator's "retry now" of an item delayed by a backoff or by its
// enqueue's Delay.
//
// RetryNow makes the delayed item id of queue visible now, keeping its
// attempts and history, and returns it; a visible item is returned as it
// is. An item of queue in any other state (claimed, dead, finished), or
// of no such queue, gets an error matching lease.ErrNotFound and nothing
// changes: a dead letter is requeued with RequeueDead.
type Retrier interface {
	Store
	RetryNow(ctx context.Context, queue string, id ItemID) (Item, error)
}

// Retention says how long a store keeps the items that finished, per state,
// counted from when each finished (FinishedAt, or DeadAt for a dead
// letter). A kept item stays visible to Lookup, List and Counts, and keeps
// its Key (an Enqueue with it returns the kept item) until a Clean removes
// it. It is a plain value, safe to copy and share.
//
// The zero Retention keeps no completed or cancelled item (they are removed
// when they finish) and keeps dead letters until DeleteDead: a store's
// behaviour unless told otherwise. StandardRetention is the retention of a
// queue that keeps its history for a while, as River's does by default.
type Retention struct {
	// Completed is how long a completed item is kept; 0 removes it when
	// it completes.
	Completed time.Duration
	// Cancelled is how long a cancelled item is kept; 0 removes it when
	// it is cancelled.
	Cancelled time.Duration
	// Dead is how long a dead letter is kept before a Clean may remove
	// it; 0 keeps dead letters until DeleteDead.
	Dead time.Duration
}

// StandardRetention keeps completed and cancelled items for a day and dead
// letters for a week: enough to look at what ran yesterday without the
// table growing with all history.
var StandardRetention = Retention{Completed: 24 * time.Hour, Cancelled: 24 * time.Hour, Dead: 7 * 24 * time.Hour}

// Check returns an error matching lease.ErrInvalidArgument naming the
// first negative field ("retention.completed", "retention.cancelled",
// "retention.dead"), or nil.
func (r Retention) Check() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"completed", r.Completed}, {"cancelled", r.Cancelled}, {"dead", r.Dead}} {
		if f.d < 0 {
			return &lease.Error{Package: "claim", Code: lease.CodeInvalidArgument, Op: "retention",
				Field: "retention." + f.name, Detail: f.d.String() + " is negative"}
		}
	}
	return nil
}

// Cleaner is a Store that keeps finished items for a Retention and removes
// them once it has passed.
//
// Clean removes up to limit items whose retention has passed, on the
// store's clock, oldest first within each state, and returns how many it
// removed; fewer than limit means it found no more. It never removes an
// item before its retention has passed, nor an item in any other state.
// Calls may come from several processes at once: a store lets one clean at
// a time and returns 0 at once to the others (claim.Memory under its lock, the
// PostgreSQL store under a transaction-scoped advisory lock), so no two
// cleaners fight over the same rows. limit below 1 is bad input.
type Cleaner interface {
	Store
	Clean(ctx context.Context, limit int) (int, error)
}

// TimeBase is a Store whose clock is a lease.Clock of this process, such
// as claim.Memory, whose deadlines are its lease.Service's time. A
// claim.Broker over a TimeBase runs Work's heartbeats and timers on that
// clock, so that it counts on the very time its claims expire on; over any
// other store it uses its own clock (claim.WithClock). A store that wraps
// one should forward Clock. Clock may be called from any goroutine, and
// its Now never runs backwards.
type TimeBase interface {
	Store
	Clock() lease.Clock
}
