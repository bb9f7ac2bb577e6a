package claim

import (
	"context"
	"time"
)

// Pauser is a Store whose queues can be paused: a paused queue hands out
// no claims (Claim returns an empty slice, and a Notify channel is not
// closed for it until it is resumed) while Enqueue, settlements and the
// inspection calls go on as usual. Claims made before the pause stay live.
// Resume closes the queue's Notify channels at once, so waiting workers
// claim without waiting for a poll. Pausing a paused queue, or resuming
// one that is not paused, changes nothing. A pause lasts until Resume,
// whether or not the queue has items, and for a store shared by several
// processes it holds in all of them. Memory and the PostgreSQL store are
// Pausers.
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

// PauseQueue pauses queue: its workers get no claims until ResumeQueue
// (see Pauser). A store that cannot pause gets an error matching
// lease.ErrInvalidArgument naming "store".
func (b *Broker) PauseQueue(ctx context.Context, queue string) error {
	const op = "pause"
	if err := checkQueue(ctx, op, queue); err != nil {
		return err
	}
	p, ok := b.store.(Pauser)
	if !ok {
		return invalid(op, "store", "cannot pause queues (not a claim.Pauser)")
	}
	return p.Pause(ctx, queue)
}

// ResumeQueue resumes a paused queue and wakes its workers at once.
func (b *Broker) ResumeQueue(ctx context.Context, queue string) error {
	const op = "resume"
	if err := checkQueue(ctx, op, queue); err != nil {
		return err
	}
	p, ok := b.store.(Pauser)
	if !ok {
		return invalid(op, "store", "cannot pause queues (not a claim.Pauser)")
	}
	return p.Resume(ctx, queue)
}

// Queues lists the store's queues, with their counts and whether they are
// paused, in name order: a page of at most q.Limit above q.After.
func (b *Broker) Queues(ctx context.Context, q QueueQuery) ([]QueueInfo, error) {
	const op = "queues"
	if err := checkQueueQuery(ctx, q); err != nil {
		return nil, err
	}
	l, ok := b.store.(QueueLister)
	if !ok {
		return nil, invalid(op, "store", "cannot list queues (not a claim.QueueLister)")
	}
	return l.Queues(ctx, q)
}

func checkQueueQuery(ctx context.Context, q QueueQuery) error {
	const op = "queues"
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return checks.Queues(op, q.Limit, q.After)
}
