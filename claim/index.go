package claim

// The Memory finds items by ID in an idtable.Table, whose memory follows
// the items held: chunks of consecutive IDs that churn leaves with few
// items (a dead letter among items completed long ago) move their items to
// a map and are freed.

// lookup returns the item with id, or nil.
func (m *Memory) lookup(id ItemID) *item { return m.items.Get(uint64(id)) }

// forget removes the item id from the table. m.mu is held.
func (m *Memory) forget(id ItemID) { m.items.Delete(uint64(id)) }

// sweepSpan is how many IDs are issued between two frees of the retired
// queues.
const sweepSpan = 256

// sweep frees the queues retired meanwhile when id, just issued, starts a
// span of sweepSpan IDs. m.mu is held.
func (m *Memory) sweep(id ItemID) {
	if id%sweepSpan == 0 {
		m.freeRetired()
	}
}
