package claim

import (
	"context"
	"slices"
)

// Counts returns the numbers of items of queue in each state, as of now.
// An unknown queue has zero counts.
func (m *Memory) Counts(ctx context.Context, queue string) (Counts, error) {
	const op = "counts"
	if err := checkQueue(ctx, op, queue); err != nil {
		return Counts{}, err
	}
	m.mu.Lock()
	defer m.unlock()
	if err := m.open(op); err != nil {
		return Counts{}, err
	}
	qs := m.findQueue(queue)
	if qs == nil {
		return Counts{}, nil
	}
	return qs.counts(), nil
}

// Lookup returns the item id as of now. A completed, cancelled or deleted
// item gets an error matching ErrNotFound. ID 0, which no item has, is bad
// input (field "id"), as it is to Cancel, RequeueDead, DeleteDead and
// RetryNow.
func (m *Memory) Lookup(ctx context.Context, id ItemID) (Item, error) {
	const op = "lookup"
	if err := checkContext(ctx, op); err != nil {
		return Item{}, err
	}
	if err := checks.ID(op, id); err != nil {
		return Item{}, err
	}
	m.mu.Lock()
	defer m.unlock()
	if err := m.open(op); err != nil {
		return Item{}, err
	}
	it := m.lookup(id)
	if it == nil {
		return Item{}, &NotFoundError{Op: op, Item: id}
	}
	return m.snapshot(it), nil
}

// List returns the items of q.Queue in q.State (every state when zero),
// of q.Kind (every kind when "") and with q.Tag (any when ""), with IDs
// above q.After, in ID order, at most q.Limit of them. It visits the
// queue's items of those states, so it costs the queue's size (and, for
// delayed items, the delayed items of every queue; for completed and
// cancelled ones, the kept items of every queue), not the page's, though
// it keeps only the page.
func (m *Memory) List(ctx context.Context, q Query) ([]Item, error) {
	if err := checkQuery(ctx, q); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.unlock()
	if err := m.open("list"); err != nil {
		return nil, err
	}
	qs := m.findQueue(q.Queue)
	if qs == nil {
		return []Item{}, nil
	}
	page := lowestIDs{limit: q.Limit}
	add := func(it *item) bool {
		if it.qs == qs && it.id > q.After && (q.State == 0 || it.state == q.State) && (q.Kind == "" || it.kind == q.Kind) &&
			(q.Tag == "" || slices.Contains(it.tags, q.Tag)) {
			page.offer(it)
		}
		return true
	}
	if q.State == 0 || q.State == Visible {
		qs.ready.each(add)
		if qs.levels != nil {
			for i := range qs.levels {
				qs.levels[i].each(add)
			}
		}
	}
	if q.State == 0 || q.State == Delayed {
		m.delayed.h.Each(add)
	}
	if q.State == 0 || q.State == Claimed {
		// Claims being granted are in no map yet: Claim holds them out of
		// view until they are, as it does the items it hands out.
		for _, h := range m.byLease.m {
			add(h.item)
		}
	}
	if q.State == 0 || q.State == Dead {
		for _, it := range qs.dead {
			add(it)
		}
	}
	if (q.State == 0 || q.State == Completed) && qs.completed > 0 {
		m.kept[0].each(func(it *item) { add(it) })
	}
	if (q.State == 0 || q.State == Cancelled) && qs.cancelled > 0 {
		m.kept[1].each(func(it *item) { add(it) })
	}
	found := page.sorted()
	out := make([]Item, len(found))
	for i, it := range found {
		out[i] = m.snapshot(it)
	}
	return out, nil
}

// RequeueDead makes the dead item id of queue visible again with a fresh
// set of attempts; its history is kept. An item that is not a dead letter
// of queue gets an error matching ErrNotFound and nothing changes.
func (m *Memory) RequeueDead(ctx context.Context, queue string, id ItemID) (Item, error) {
	const op = "requeue_dead"
	it, now, err := m.deadItem(ctx, op, queue, id)
	if err != nil {
		return Item{}, err
	}
	defer m.unlock()
	it.qs.removeDead(it)
	it.attempts = 0
	it.deadAt = 0
	m.makeVisible(it, now)
	return m.snapshot(it), nil
}

// DeleteDead deletes the dead item id of queue for good, freeing its
// idempotency key. An item that is not a dead letter of queue gets an
// error matching ErrNotFound and nothing changes.
func (m *Memory) DeleteDead(ctx context.Context, queue string, id ItemID) error {
	it, _, err := m.deadItem(ctx, "delete_dead", queue, id)
	if err != nil {
		return err
	}
	defer m.unlock()
	m.remove(it)
	return nil
}

// deadItem validates a dead-letter operation and returns its item and the
// time with the lock held; on error the lock is released.
func (m *Memory) deadItem(ctx context.Context, op, queue string, id ItemID) (*item, int64, error) {
	if err := checkItemID(ctx, op, queue, id); err != nil {
		return nil, 0, err
	}
	m.mu.Lock()
	now, err := m.begin(op)
	if err != nil {
		m.unlock()
		return nil, 0, err
	}
	it := m.lookup(id)
	if it == nil || it.state != Dead || it.qs.name != queue {
		m.unlock()
		return nil, 0, &NotFoundError{Op: op, Queue: queue, Item: id}
	}
	return it, now, nil
}

// closedChan is a channel that is always closed.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Notify returns a channel closed once an item of queue may have become
// claimable (an enqueue, a delay ended, a claim lost, retried or snoozed, a
// dead letter requeued) or the Memory or its service closed; see Store.
// The Memory misses no change, so it never polls. Until stop is called the
// queue's state is kept, however empty the queue.
func (m *Memory) Notify(queue string) (ready <-chan struct{}, stop func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.svcDown {
		return closedChan, func() {}
	}
	qs := m.queue(queue)
	if qs.wake == nil {
		qs.wake = make(chan struct{})
	}
	qs.waiters++
	stopped := false
	return qs.wake, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if stopped {
			return
		}
		stopped = true
		qs.waiters--
		m.retireIfUnused(qs)
	}
}

// checkItemID checks the context, queue and ID of an operation on one item:
// no item has ID 0, so it is bad input (field "id"), as in every store.
func checkItemID(ctx context.Context, op, queue string, id ItemID) error {
	if err := checkQueue(ctx, op, queue); err != nil {
		return err
	}
	return checks.ID(op, id)
}
