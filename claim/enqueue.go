package claim

import (
	"context"
	"errors"
	"strings"

	"github.com/leasehold/lease"
)

// Enqueue adds an item with payload (copied) to queue and returns it. The
// item is claimable at once unless the Delay option says otherwise. With the
// Key option, an item of the queue with that key that still exists is
// returned instead and nothing is added. Bad input (nil ctx, empty queue, a
// negative delay or timeout, a timeout above MaxTimeout, max attempts < 1,
// an empty key, a priority outside 0..MaxPriority) gets an error matching
// lease.ErrInvalidArgument that names the field, and nothing changes.
func (b *Broker) Enqueue(ctx context.Context, queue string, payload []byte, opts ...EnqueueOption) (Item, error) {
	return b.enqueue(ctx, queue, "", payload, opts)
}

// enqueue is Enqueue of an item of kind.
func (b *Broker) enqueue(ctx context.Context, queue, kind string, payload []byte, opts []EnqueueOption) (Item, error) {
	if err := checkContext(ctx, "enqueue"); err != nil {
		return Item{}, err
	}
	n, err := b.fillItem("", queue, kind, payload, opts)
	if err != nil {
		return Item{}, err
	}
	if m, ok := b.store.(*Memory); ok {
		// Spare the batch's two slices: a direct call keeps n on the stack.
		return m.enqueueOne(ctx, &n)
	}
	items, err := b.store.Enqueue(ctx, []NewItem{n})
	if err != nil {
		return Item{}, unbatched(err)
	}
	return items[0], nil
}

// newItem is the item Enqueue adds to queue, as fillItem makes it, and
// checked as its store will check it, its fields named with prefix: for
// NewPeriodic, which checks a job's options before any tick is enqueued.
func (b *Broker) newItem(prefix, queue, kind string, payload []byte, opts []EnqueueOption) (NewItem, error) {
	n, err := b.fillItem(prefix, queue, kind, payload, opts)
	if err != nil {
		return NewItem{}, err
	}
	if err := checkItem(prefix, &n); err != nil {
		return NewItem{}, err
	}
	return n, nil
}

// fillItem is the item Enqueue adds to queue, of kind and carrying
// payload, with opts: filled with the defaults, and with the options' own
// arguments checked (an empty Key, Key with Unique), its fields named with
// prefix. It is the one reading of EnqueueOptions. The item itself its
// store checks.
func (b *Broker) fillItem(prefix, queue, kind string, payload []byte, opts []EnqueueOption) (NewItem, error) {
	var o enqueueOptions
	for _, opt := range opts {
		o = opt.applyEnqueue(o)
	}
	n := NewItem{Queue: queue, Payload: payload, Kind: kind, Key: o.key, Delay: o.delay,
		Priority: o.priority, Timeout: o.timeout, Tags: o.tags, Metadata: o.metadata}
	if o.setMax {
		n.MaxAttempts = o.maxAttempts // MaxAttempts(0) is refused, not defaulted
	} else {
		n = n.WithDefaults(b.opts.maxAttempts)
	}
	if o.hasKey && o.key == "" {
		return NewItem{}, invalid("enqueue", prefix+"key", "must not be empty")
	}
	if o.unique != nil {
		switch {
		case o.hasKey:
			return NewItem{}, invalid("enqueue", prefix+"key", "is set with Unique, which sets it")
		case o.unique.ByPeriod < 0:
			return NewItem{}, invalid("enqueue", prefix+"unique.by_period", o.unique.ByPeriod.String()+" is negative")
		}
		n.Key = UniqueKey(n.Kind, n.Payload, *o.unique, b.clock.Now())
		n.KeyStates = o.unique.ByState
	}
	return n, nil
}

// unbatched names a field of the one item Enqueue sends to its store as
// Enqueue's own checks do: "queue" where the store, checking a batch of
// one, said "items[0].queue".
func unbatched(err error) error {
	const prefix = "items[0]."
	var le *lease.Error
	if !errors.As(err, &le) || le.Code != lease.CodeInvalidArgument || !strings.HasPrefix(le.Field, prefix) {
		return err
	}
	named := *le
	named.Field = strings.TrimPrefix(le.Field, prefix)
	return &named
}

// EnqueueMany adds items in one step and returns them, in order: every item
// is stored or, on error, none is. An item whose MaxAttempts is zero gets
// the Broker's default (WithMaxAttempts). An item whose Key exists in its
// queue, or appeared earlier in items, is not added: the existing item is
// returned in its place. Bad input gets an error matching
// lease.ErrInvalidArgument whose Field names the item, as in
// "items[2].queue", and nothing changes. items is not changed.
func (b *Broker) EnqueueMany(ctx context.Context, items []NewItem) ([]Item, error) {
	if err := checkContext(ctx, "enqueue"); err != nil {
		return nil, err
	}
	filled := make([]NewItem, len(items))
	for i, n := range items {
		filled[i] = n.WithDefaults(b.opts.maxAttempts)
	}
	if len(filled) == 0 {
		return []Item{}, nil
	}
	return b.store.Enqueue(ctx, filled)
}
