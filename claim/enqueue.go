package claim

import (
	"context"
	"strconv"
)

// Enqueue adds an item with payload (copied) to queue and returns it. The
// item is visible at once unless the Delay option says otherwise. With the
// Key option, an item of the queue with that key that still exists is
// returned instead and nothing is added. Bad input (nil ctx, empty queue, a
// negative delay, max attempts < 1, an empty key) gets an error matching
// lease.ErrInvalidArgument that names the field, and nothing changes.
func (b *Broker) Enqueue(ctx context.Context, queue string, payload []byte, opts ...EnqueueOption) (Item, error) {
	var o enqueueOptions
	for _, opt := range opts {
		o = opt.applyEnqueue(o)
	}
	if err := checkEnqueue(ctx, queue, o); err != nil {
		return Item{}, err
	}
	payload = clone(payload)
	b.mu.Lock()
	defer b.unlock()
	now, err := b.begin("enqueue")
	if err != nil {
		return Item{}, err
	}
	if o.key != "" {
		if it := b.keys.get(queueKey{queue, o.key}); it != nil {
			return b.snapshot(it), nil
		}
	}
	qs := b.queue(queue)
	b.lastID++
	it := &item{
		id:       b.lastID,
		qs:       qs,
		key:      o.key,
		payload:  payload,
		max:      b.opts.maxAttempts,
		enqueued: now,
		index:    -1,
	}
	if o.maxAttempts != 0 {
		it.max = o.maxAttempts
	}
	b.items.Put(uint64(it.id), it)
	if o.key != "" {
		b.keys.put(queueKey{queue, o.key}, it)
	}
	b.place(it, addSat(now, o.delay), now)
	b.sweep(it.id) // once the item is in its queue, which is then in use
	return b.snapshot(it), nil
}

func checkEnqueue(ctx context.Context, queue string, o enqueueOptions) error {
	if err := checkContext(ctx, "enqueue"); err != nil {
		return err
	}
	switch {
	case queue == "":
		return invalid("enqueue", "queue", "must not be empty")
	case o.delay < 0:
		return invalid("enqueue", "delay", o.delay.String()+" is negative")
	case o.maxAttempts < 0 || (o.maxAttempts == 0 && o.setMax):
		return invalid("enqueue", "max_attempts", strconv.Itoa(o.maxAttempts)+" is less than 1")
	case o.hasKey && o.key == "":
		return invalid("enqueue", "key", "must not be empty")
	}
	return nil
}

func checkContext(ctx context.Context, op string) error {
	if ctx == nil {
		return invalid(op, "ctx", "must not be nil")
	}
	return ctx.Err()
}
