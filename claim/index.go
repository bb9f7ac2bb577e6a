package claim

// The Broker finds items by ID in an idtable.Table, whose memory follows
// the items held: a chunk of consecutive IDs left with few items moves them
// to a map and is freed. Two habits of the table shape how the Broker feeds
// it. It thins a chunk only when deleting from a chunk older than the
// newest one, and it frees the newest chunk when that empties, to allocate
// it again at the next put. A queue whose items are completed as soon as
// they are enqueued would meet both: each completion would free and
// reallocate the newest chunk, and the few items that survive there (a dead
// letter, an item delayed or claimed for long) would each keep a whole
// chunk alive.
//
// So an item completed or deleted while its ID is recent is not deleted at
// once: its slot is marked gone, which keeps the newest chunk in use, and
// every sweepSpan IDs the Broker sweeps the span issued two spans ago, now
// in older chunks, deleting the marks there. Those deletions let the table
// thin the chunks that kept few survivors. At most two spans of marks are
// outstanding, and an item with an older ID is deleted at once.
const sweepSpan = 256

// gone marks the slot of a recent item that no longer exists.
var gone = new(item)

// lookup returns the item with id, or nil.
func (b *Broker) lookup(id ItemID) *item {
	if it := b.items.Get(uint64(id)); it != gone {
		return it
	}
	return nil
}

// forget removes the item id from the table. b.mu is held.
func (b *Broker) forget(id ItemID) {
	span := id / sweepSpan
	if span+1 < b.lastID/sweepSpan {
		b.items.Delete(uint64(id)) // a span the sweep has passed
		return
	}
	b.items.Put(uint64(id), gone)
	b.marks[span%ItemID(len(b.marks))]++
}

// sweep deletes the marks of the span two spans before id, when id, just
// issued, starts a span, and frees the queues retired meanwhile. b.mu is
// held.
func (b *Broker) sweep(id ItemID) {
	if id%sweepSpan != 0 {
		return
	}
	b.freeRetired()
	if id < 2*sweepSpan {
		return
	}
	span := id/sweepSpan - 2
	marks := &b.marks[span%ItemID(len(b.marks))]
	for x := span * sweepSpan; *marks > 0 && x < (span+1)*sweepSpan; x++ {
		if b.items.Get(uint64(x)) == gone {
			b.items.Delete(uint64(x))
			*marks--
		}
	}
}
