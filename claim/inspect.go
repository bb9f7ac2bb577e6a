package claim

import (
	"cmp"
	"context"
	"slices"
)

// Counts returns the numbers of items of queue in each state, as of now. An
// unknown queue has zero counts, as has every queue of a closed Broker.
func (b *Broker) Counts(queue string) Counts {
	b.mu.Lock()
	defer b.unlock()
	if err := b.open("counts"); err != nil {
		return Counts{}
	}
	qs := b.findQueue(queue)
	if qs == nil {
		return Counts{}
	}
	return qs.counts()
}

// Lookup returns the item with id as of now, and whether it exists. A
// completed or deleted item does not.
func (b *Broker) Lookup(id ItemID) (Item, bool) {
	b.mu.Lock()
	defer b.unlock()
	if err := b.open("lookup"); err != nil {
		return Item{}, false
	}
	it := b.lookup(id)
	if it == nil {
		return Item{}, false
	}
	return b.snapshot(it), true
}

// DeadLetters returns the dead items of queue, in the order they died (then
// by ID), with their failure history. It returns nil for an unknown queue
// or a closed Broker.
func (b *Broker) DeadLetters(queue string) []Item {
	b.mu.Lock()
	defer b.unlock()
	if err := b.open("dead_letters"); err != nil {
		return nil
	}
	qs := b.findQueue(queue)
	if qs == nil || len(qs.dead) == 0 {
		return nil
	}
	dead := slices.Clone(qs.dead)
	slices.SortFunc(dead, func(x, y *item) int {
		return cmp.Or(cmp.Compare(x.deadAt, y.deadAt), cmp.Compare(x.id, y.id))
	})
	out := make([]Item, len(dead))
	for i, it := range dead {
		out[i] = b.snapshot(it)
	}
	return out
}

// RequeueDead makes the dead item id of queue visible again with a fresh
// set of attempts; its history is kept. An item that is not a dead letter of
// queue gets an error matching ErrNotFound and nothing changes.
func (b *Broker) RequeueDead(ctx context.Context, queue string, id ItemID) (Item, error) {
	const op = "requeue_dead"
	it, now, err := b.deadItem(ctx, op, queue, id)
	if err != nil {
		return Item{}, err
	}
	defer b.unlock()
	it.qs.removeDead(it)
	it.attempts = 0
	it.deadAt = 0
	b.makeVisible(it, now)
	return b.snapshot(it), nil
}

// DeleteDead deletes the dead item id of queue for good, freeing its
// idempotency key. An item that is not a dead letter of queue gets an error
// matching ErrNotFound and nothing changes.
func (b *Broker) DeleteDead(ctx context.Context, queue string, id ItemID) error {
	it, _, err := b.deadItem(ctx, "delete_dead", queue, id)
	if err != nil {
		return err
	}
	defer b.unlock()
	b.remove(it)
	return nil
}

// deadItem validates a dead-letter operation and returns its item and the
// time with the lock held; on error the lock is released.
func (b *Broker) deadItem(ctx context.Context, op, queue string, id ItemID) (*item, int64, error) {
	if err := checkContext(ctx, op); err != nil {
		return nil, 0, err
	}
	if queue == "" {
		return nil, 0, invalid(op, "queue", "must not be empty")
	}
	b.mu.Lock()
	now, err := b.begin(op)
	if err != nil {
		b.unlock()
		return nil, 0, err
	}
	it := b.lookup(id)
	if it == nil || it.state != Dead || it.qs.name != queue {
		b.unlock()
		return nil, 0, &NotFoundError{Op: op, Queue: queue, Item: id}
	}
	return it, now, nil
}
