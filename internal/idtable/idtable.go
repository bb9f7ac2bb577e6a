// Package idtable maps dense, increasing IDs to records, with memory that
// follows the records held rather than the IDs ever issued.
package idtable

import "maps"

// Table maps IDs to pointers. IDs are issued densely in increasing order, so
// most records sit in chunks of consecutive IDs found through a small map
// keyed by chunk number: a lookup touches that map, which stays in cache,
// and one chunk slot. A plain map of a million records costs a cache miss on
// every lookup.
//
// A chunk is 2 KiB of pointers. When churn leaves chunks with few records
// (long-lived leases among thousands that ended, dead letters among items
// completed long ago), those records move to a plain map and the chunks are
// freed, so a survivor costs a map entry instead of a whole chunk. Maps are
// rebuilt when they have shrunk to a quarter of their peak, because Go maps
// never give memory back on delete.
//
// The zero Table is empty and ready to use. A Table is not safe for
// concurrent use.
type Table[T any] struct {
	chunks map[uint64]*chunk[T]
	sparse map[uint64]*T
	// The chunk found last: consecutive calls mostly touch the same record
	// or its neighbours, and skipping the map then saves a hash per lookup.
	lastNum   uint64
	lastChunk *chunk[T]
	top       uint64 // the highest chunk number a record was put in
	n         int
	peakN     int // the most records held since the last sweep
	// Peak sizes of the maps since they were last rebuilt.
	chunksPeak, sparsePeak int
}

const (
	chunkBits = 8
	chunkSize = 1 << chunkBits
	chunkMask = chunkSize - 1
	// A sweep moves the records of chunks holding this many or fewer to the
	// sparse map: at a quarter full a chunk costs 32 bytes per record, about
	// what a map entry costs, so the move never makes a record dearer.
	thinChunk = chunkSize / 4
	// Maps smaller than this are never rebuilt.
	minRebuild = 64
)

type chunk[T any] struct {
	slots [chunkSize]*T
	used  int
}

// Len returns the number of records.
func (t *Table[T]) Len() int { return t.n }

// Get returns the record of id, or nil.
func (t *Table[T]) Get(id uint64) *T {
	if c := t.chunk(id >> chunkBits); c != nil {
		return c.slots[id&chunkMask]
	}
	if len(t.sparse) == 0 {
		return nil
	}
	return t.sparse[id]
}

func (t *Table[T]) chunk(num uint64) *chunk[T] {
	if t.lastChunk != nil && t.lastNum == num {
		return t.lastChunk
	}
	c := t.chunks[num]
	if c != nil {
		t.lastNum, t.lastChunk = num, c
	}
	return c
}

// Put stores v as the record of id, replacing any.
func (t *Table[T]) Put(id uint64, v *T) {
	num := id >> chunkBits
	c := t.chunk(num)
	if c == nil && num < t.top {
		// An old chunk that was thinned out: keep it sparse.
		if t.sparse == nil {
			t.sparse = make(map[uint64]*T)
		}
		if _, ok := t.sparse[id]; !ok {
			t.n++
			t.peakN = max(t.peakN, t.n)
		}
		t.sparse[id] = v
		t.sparsePeak = max(t.sparsePeak, len(t.sparse))
		return
	}
	if c == nil {
		if t.chunks == nil {
			t.chunks = make(map[uint64]*chunk[T])
		}
		if num > t.top {
			// The newest chunk receives no more IDs: if churn has
			// already emptied most of it (items completed as soon as
			// they were queued), its survivors move out now.
			t.thin(t.top)
		}
		c = new(chunk[T])
		t.chunks[num] = c
		t.chunksPeak = max(t.chunksPeak, len(t.chunks))
		t.lastNum, t.lastChunk = num, c
	}
	if c.slots[id&chunkMask] == nil {
		c.used++
		t.n++
		t.peakN = max(t.peakN, t.n)
	}
	c.slots[id&chunkMask] = v
	t.top = max(t.top, num)
}

// Delete removes the record of id, if any.
func (t *Table[T]) Delete(id uint64) {
	num := id >> chunkBits
	// Deletions of old IDs look their chunk up without disturbing the
	// cached one; deletions of recent ones find it cached.
	c := t.lastChunk
	if c == nil || t.lastNum != num {
		c = t.chunks[num]
	}
	if c == nil {
		if _, ok := t.sparse[id]; ok {
			delete(t.sparse, id)
			t.n--
			t.sparse = Rebuilt(t.sparse, &t.sparsePeak)
		}
		return
	}
	if c.slots[id&chunkMask] == nil {
		return
	}
	c.slots[id&chunkMask] = nil
	c.used--
	t.n--
	if c.used == 0 && num != t.top {
		// The newest chunk stays even when empty: the next IDs go there,
		// and freeing it would mean allocating it again at the next put.
		t.dropChunk(num)
	}
	if t.n*4 < t.peakN*3 && len(t.chunks)*thinChunk > t.n-len(t.sparse) {
		t.sweep()
	}
}

// sweep moves the records of thin chunks to the sparse map and frees the
// chunks. It runs when the table has lost a quarter of its records since
// the last sweep and its chunks are on average less than a quarter full
// (counting the records in chunks, not those already in the map), so
// its cost, a pass over the chunks, is paid once per such loss: O(1) per
// delete, amortised. Chunks
// being drained in ID order (the usual churn, where old records leave
// first) never trigger it, since the chunks stay full on average. The chunk
// receiving new IDs is left alone.
func (t *Table[T]) sweep() {
	var thin []uint64 // collected first: thinning rebuilds the map
	for num, c := range t.chunks {
		if num < t.top && c.used <= thinChunk {
			thin = append(thin, num)
		}
	}
	for _, num := range thin {
		t.thin(num)
	}
	t.peakN = t.n
}

// thin moves the records of chunk num to the sparse map and frees it, if
// it holds thinChunk records or fewer.
func (t *Table[T]) thin(num uint64) {
	c := t.chunks[num]
	if c == nil || c.used > thinChunk {
		return
	}
	if c.used > 0 && t.sparse == nil {
		t.sparse = make(map[uint64]*T)
	}
	base := num << chunkBits
	for i, v := range c.slots {
		if v != nil {
			t.sparse[base+uint64(i)] = v
		}
	}
	t.sparsePeak = max(t.sparsePeak, len(t.sparse))
	t.dropChunk(num)
}

func (t *Table[T]) dropChunk(num uint64) {
	c := t.chunks[num]
	delete(t.chunks, num)
	if t.lastChunk == c {
		t.lastChunk = nil
	}
	t.chunks = Rebuilt(t.chunks, &t.chunksPeak)
}

// Rebuilt returns m, or a copy of it once it has shrunk to a quarter of its
// peak (which it then resets), so that a map that once held many entries
// does not keep their memory: Go maps never shrink. Maps whose peak is
// below 64 are left alone.
func Rebuilt[K comparable, V any](m map[K]V, peak *int) map[K]V {
	return rebuiltAbove(m, peak, minRebuild)
}

// rebuiltAbove is Rebuilt for maps whose peak is at least least.
func rebuiltAbove[K comparable, V any](m map[K]V, peak *int, least int) map[K]V {
	if *peak < least || len(m)*4 > *peak {
		return m
	}
	out := make(map[K]V, len(m)) // sized to what is left: maps.Clone keeps m's size
	maps.Copy(out, m)
	*peak = len(out)
	return out
}

// Each calls f with every record, in no particular order, until f returns
// false. f must not change the table.
func (t *Table[T]) Each(f func(*T) bool) {
	for _, c := range t.chunks {
		for _, v := range c.slots {
			if v != nil && !f(v) {
				return
			}
		}
	}
	for _, v := range t.sparse {
		if !f(v) {
			return
		}
	}
}
