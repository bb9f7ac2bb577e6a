package lease

// leaseTable maps IDs to entries. IDs are issued densely in increasing order,
// so entries are grouped in chunks of consecutive IDs found through a small
// map keyed by chunk number: a lookup touches that map, which stays in cache
// (a thousand chunks hold a million leases), and one chunk slot. A plain map
// of a million entries costs a cache miss on every lookup, which made it the
// largest cost of Renew. A chunk is freed when its last entry leaves, so
// memory follows the leases held, not the IDs ever issued.
type leaseTable struct {
	chunks map[ID]*chunk
	// The chunk found last: consecutive calls mostly touch the same lease
	// or its neighbours, and skipping the map then saves a hash per lookup.
	lastNum   ID
	lastChunk *chunk
}

const chunkBits = 8

type chunk struct {
	slots [1 << chunkBits]*entry
	used  int
}

func newLeaseTable() leaseTable {
	return leaseTable{chunks: make(map[ID]*chunk)}
}

func (t *leaseTable) get(id ID) *entry {
	if c := t.chunk(id >> chunkBits); c != nil {
		return c.slots[id&(1<<chunkBits-1)]
	}
	return nil
}

func (t *leaseTable) chunk(num ID) *chunk {
	if t.lastChunk != nil && t.lastNum == num {
		return t.lastChunk
	}
	c := t.chunks[num]
	if c != nil {
		t.lastNum, t.lastChunk = num, c
	}
	return c
}

func (t *leaseTable) put(e *entry) {
	c := t.chunk(e.id >> chunkBits)
	if c == nil {
		c = new(chunk)
		t.chunks[e.id>>chunkBits] = c
	}
	c.slots[e.id&(1<<chunkBits-1)] = e
	c.used++
}

func (t *leaseTable) delete(id ID) {
	// Deletions evict old IDs, far from the ones in use: look them up
	// without disturbing the cached chunk.
	c := t.chunks[id>>chunkBits]
	if c == nil || c.slots[id&(1<<chunkBits-1)] == nil {
		return
	}
	c.slots[id&(1<<chunkBits-1)] = nil
	if c.used--; c.used == 0 {
		delete(t.chunks, id>>chunkBits)
		if t.lastChunk == c {
			t.lastChunk = nil
		}
	}
}
