package idtable

// Map is a map whose memory follows the entries it holds, given back in
// small steps. Go maps never give memory back on delete, so a map that once
// held many entries must be copied into a smaller one; copying it at once
// is O(n) in one call, a stall of milliseconds for a large map. Map instead
// starts a new map once it has shrunk to a quarter of its peak and moves
// the old one's entries over a few at a time, on each later Set and Delete:
// no call does more than a bounded amount of moving, and the old map is
// dropped once empty. A lookup looks in both while the move is under way.
//
// The zero Map is empty and ready to use. A Map is not safe for concurrent
// use.
type Map[K comparable, V any] struct {
	cur  map[K]V
	old  map[K]V // being moved into cur, or nil
	peak int     // most entries held since cur was started
}

// moveStep is how many entries each Delete moves from the old map (a Set
// moves one). The old map holds a quarter of its peak when the move starts,
// n say, and the map shrinks to a quarter again only after 3n/4 deletes,
// which move 3n: the move ends long before.
const moveStep = 4

// Len returns the number of entries.
func (m *Map[K, V]) Len() int { return len(m.cur) + len(m.old) }

// Get returns the value of k and whether it is present.
func (m *Map[K, V]) Get(k K) (V, bool) {
	if v, ok := m.cur[k]; ok || m.old == nil {
		return v, ok
	}
	v, ok := m.old[k]
	return v, ok
}

// Set stores v under k.
func (m *Map[K, V]) Set(k K, v V) {
	if m.cur == nil {
		m.cur = make(map[K]V)
	}
	if m.old != nil {
		delete(m.old, k)
	}
	m.cur[k] = v
	m.peak = max(m.peak, m.Len())
	m.step(1)
}

// Delete removes k, if present.
func (m *Map[K, V]) Delete(k K) {
	delete(m.cur, k)
	if m.old != nil {
		delete(m.old, k)
	}
	if m.old == nil && m.peak >= minRebuild && len(m.cur)*4 <= m.peak {
		// Shrunk to a quarter: start a new map and move into it.
		m.old, m.cur, m.peak = m.cur, make(map[K]V, len(m.cur)), len(m.cur)
	}
	m.step(moveStep)
}

// step moves up to most entries from the old map.
func (m *Map[K, V]) step(most int) {
	if m.old == nil {
		return
	}
	n := 0
	for k, v := range m.old {
		if n == most {
			return
		}
		delete(m.old, k)
		m.cur[k] = v
		n++
	}
	m.old = nil
}

// All calls f with every entry, in no particular order, until f returns
// false. f must not change the map.
func (m *Map[K, V]) All(f func(K, V) bool) {
	for _, mm := range [2]map[K]V{m.cur, m.old} {
		for k, v := range mm {
			if !f(k, v) {
				return
			}
		}
	}
}
