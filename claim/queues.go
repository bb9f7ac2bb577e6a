package claim

import (
	"context"
	"github.com/leasehold/lease/claim/claimstore"
)

// PauseQueue pauses queue: its workers get no claims until ResumeQueue
// (see claimstore.Pauser). A store that cannot pause gets an error matching
// lease.ErrInvalidArgument naming "store".
func (b *Broker) PauseQueue(ctx context.Context, queue string) error {
	const op = "pause"
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	p, ok := b.store.(claimstore.Pauser)
	if !ok {
		return invalid(op, "store", "cannot pause queues (not a claimstore.Pauser)")
	}
	return p.Pause(ctx, queue)
}

// ResumeQueue resumes a paused queue and wakes its workers at once.
func (b *Broker) ResumeQueue(ctx context.Context, queue string) error {
	const op = "resume"
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	p, ok := b.store.(claimstore.Pauser)
	if !ok {
		return invalid(op, "store", "cannot pause queues (not a claimstore.Pauser)")
	}
	return p.Resume(ctx, queue)
}

// Queues lists the store's queues, with their counts and whether they are
// paused, in name order: a page of at most q.Limit above q.After.
func (b *Broker) Queues(ctx context.Context, q QueueQuery) ([]QueueInfo, error) {
	const op = "queues"
	if err := checkContext(ctx, op); err != nil {
		return nil, err
	}
	l, ok := b.store.(claimstore.QueueLister)
	if !ok {
		return nil, invalid(op, "store", "cannot list queues (not a claimstore.QueueLister)")
	}
	return l.Queues(ctx, q)
}
