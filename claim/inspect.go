package claim

import "context"

// Counts returns the numbers of items of queue in each state, as of now. An
// unknown queue has zero counts.
func (b *Broker) Counts(ctx context.Context, queue string) (Counts, error) {
	const op = "counts"
	if err := checkContext(ctx, op); err != nil {
		return Counts{}, err
	}
	return b.store.Counts(ctx, queue)
}

// Lookup returns the item id as of now. A completed, cancelled or deleted
// item gets an error matching ErrNotFound.
func (b *Broker) Lookup(ctx context.Context, id ItemID) (Item, error) {
	if err := checkContext(ctx, "lookup"); err != nil {
		return Item{}, err
	}
	return b.store.Lookup(ctx, id)
}

// List returns the items of q.Queue in q.State (every state when zero),
// of q.Kind (every kind when "") and with q.Tag (any when ""), with IDs
// above q.After, in ID order, at most q.Limit of them: a page. To read the
// next page, set After to the last ID of this one. List with State Dead
// lists the dead letters, with their failure history.
func (b *Broker) List(ctx context.Context, q Query) ([]Item, error) {
	if err := checkContext(ctx, "list"); err != nil {
		return nil, err
	}
	return b.store.List(ctx, q)
}

// RequeueDead makes the dead item id of queue visible again with a fresh
// set of attempts; its history is kept. An item that is not a dead letter of
// queue gets an error matching ErrNotFound and nothing changes.
func (b *Broker) RequeueDead(ctx context.Context, queue string, id ItemID) (Item, error) {
	const op = "requeue_dead"
	if err := checkContext(ctx, op); err != nil {
		return Item{}, err
	}
	return b.store.RequeueDead(ctx, queue, id)
}

// DeleteDead deletes the dead item id of queue for good, freeing its
// idempotency key. An item that is not a dead letter of queue gets an error
// matching ErrNotFound and nothing changes.
func (b *Broker) DeleteDead(ctx context.Context, queue string, id ItemID) error {
	const op = "delete_dead"
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return b.store.DeleteDead(ctx, queue, id)
}
