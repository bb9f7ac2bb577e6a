package idtable

// Map maps IDs to values, with memory that follows the entries held and no
// call that does O(n) work. Go maps never give memory back on delete, so a
// map that once held many entries must be copied into a smaller one, and
// copying a large map at once is a stall of milliseconds; moving it over a
// few entries per call does not help either, since finding the entries left
// in a map that has mostly emptied means scanning its empty slots, up to the
// whole table per call. Map instead shards its entries by ID range into
// small maps of at most shardSize IDs each: a shard is copied when it falls
// to a quarter of its peak, which copies at most shardSize/4 entries, and
// dropped when empty. IDs that are issued densely, as lease IDs are, fill
// their shards; the map of shards holds one entry per shard and is copied
// the same way.
//
// The zero Map is empty and ready to use. A Map is not safe for concurrent
// use.
type Map[K ~uint64, V any] struct {
	shards     map[uint64]*shard[K, V]
	shardsPeak int // most shards held since the map of shards was copied
	n          int
}

type shard[K ~uint64, V any] struct {
	m    map[K]V
	peak int // most entries held since m was copied
}

const (
	// shardSize is how many consecutive IDs a shard covers: 7/8 of 1,024,
	// so that a full shard fills a Go map table of 1,024 slots to its
	// highest load instead of half-filling two (at 1,024 IDs, a shard of
	// keys cost 18 bytes more per entry).
	shardSize = 896
	// A shard whose peak is below this is never copied: a small Go map
	// costs little however it was used.
	minShardCopy = 64
)

// Len returns the number of entries.
func (m *Map[K, V]) Len() int { return m.n }

// Get returns the value of k and whether it is present.
func (m *Map[K, V]) Get(k K) (V, bool) {
	if sh := m.shards[uint64(k)/shardSize]; sh != nil {
		v, ok := sh.m[k]
		return v, ok
	}
	var zero V
	return zero, false
}

// Set stores v under k.
func (m *Map[K, V]) Set(k K, v V) {
	num := uint64(k) / shardSize
	sh := m.shards[num]
	if sh == nil {
		if m.shards == nil {
			m.shards = make(map[uint64]*shard[K, V])
		}
		sh = &shard[K, V]{m: make(map[K]V)}
		m.shards[num] = sh
		m.shardsPeak = max(m.shardsPeak, len(m.shards))
	}
	before := len(sh.m)
	sh.m[k] = v
	if len(sh.m) > before {
		m.n++
		sh.peak = max(sh.peak, len(sh.m))
	}
}

// Delete removes k, if present.
func (m *Map[K, V]) Delete(k K) {
	num := uint64(k) / shardSize
	sh := m.shards[num]
	if sh == nil {
		return
	}
	if _, ok := sh.m[k]; !ok {
		return
	}
	delete(sh.m, k)
	m.n--
	if len(sh.m) == 0 {
		delete(m.shards, num)
		m.shards = Rebuilt(m.shards, &m.shardsPeak)
		return
	}
	sh.m = rebuiltAbove(sh.m, &sh.peak, minShardCopy)
}
