package claim

import (
	"context"

	"github.com/leasehold/lease/claim/claimstore"
)

var _ claimstore.Retrier = (*Memory)(nil)

// RetryNow makes the delayed item id of queue visible now and wakes the
// queue's waiters; see claimstore.Retrier.
func (m *Memory) RetryNow(ctx context.Context, queue string, id ItemID) (Item, error) {
	const op = "retry_now"
	if err := checkItemID(ctx, op, queue, id); err != nil {
		return Item{}, err
	}
	m.mu.Lock()
	defer m.unlock()
	now, err := m.begin(op)
	if err != nil {
		return Item{}, err
	}
	it := m.lookup(id)
	if it == nil || it.qs.name != queue || (it.state != Delayed && it.state != Visible) {
		return Item{}, &NotFoundError{Op: op, Queue: queue, Item: id}
	}
	if it.state == Delayed {
		m.delayed.remove(it)
		it.qs.delayed--
		m.makeVisible(it, now)
	}
	return m.snapshot(it), nil
}
