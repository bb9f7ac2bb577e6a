package lease

import (
	"cmp"
	"slices"

	"github.com/leasehold/lease/internal/idtable"
)

// leaseTable maps IDs to entries: the live leases and the remembered ended
// ones. IDs are issued densely in increasing order, so entries are stored
// inline in slabs of 256 consecutive IDs, found through a small map keyed by
// slab number. A lookup reads the map (which stays in cache) and then the
// entry itself: with a million leases that is one cache miss, where a slab
// of pointers to separately allocated entries cost two dependent ones.
//
// A slab whose IDs have mostly ended (long-lived leases among many short
// ones) would keep 20 KiB alive for a few entries, so once the table has
// lost a quarter of its entries and its slabs are on average less than half
// full, the entries of such slabs move to their own allocations in a plain
// map and the slabs are freed: memory follows the leases held, not the IDs
// ever issued. Moving an entry changes its address, so the table tells the
// service (relocated), which repoints the heap slot or ended-record slot
// that refers to it. Nothing else keeps an entry's address across calls.
type leaseTable struct {
	slabs  map[uint64]*slab
	sparse map[ID]*entry
	// The slab found last: a grant, its renewals and its revoke usually
	// touch the newest slab, and skipping the map then saves a hash.
	lastNum  uint64
	lastSlab *slab
	top      uint64 // the slab receiving new IDs
	// spare is the last slab freed, cleared, for the next one needed:
	// steady churn then allocates nothing. Only a table of spareFrom slabs
	// or more keeps one.
	spare *slab
	n     int // entries held
	peakN int // most entries held since the last sweep
	// Peak sizes of the maps since they were last rebuilt: Go maps never
	// give memory back, so a map is copied once it falls to a quarter.
	slabsPeak, sparsePeak int
	// relocated is called with an entry's new address after a sweep moved
	// it.
	relocated func(e *entry)
}

const (
	slabBits = 8
	slabSize = 1 << slabBits
	slabMask = slabSize - 1
	// A sweep moves the entries of slabs holding this many or fewer to the
	// sparse map. An entry of its own costs 80 bytes plus about 30 in the
	// map; a slab costs 80 bytes per slot, so below half full the move
	// saves memory.
	thinSlab = slabSize / 2
	// A slab left with this many entries is thinned at once, sweep or not.
	lastFew = slabSize / 32
	// A table of fewer slabs keeps no spare: it would cost more than a
	// quarter of what the leases take.
	spareFrom = 4
)

type slab struct {
	e    [slabSize]entry // e[i] is in use when e[i].id != 0
	used int
}

// drainingInOrder reports whether the entries left are the slab's last
// ones: the slab is being emptied in ID order.
func (sl *slab) drainingInOrder() bool {
	for i := slabSize - sl.used; i < slabSize; i++ {
		if sl.e[i].id == 0 {
			return false
		}
	}
	return true
}

func newLeaseTable(relocated func(*entry)) leaseTable {
	return leaseTable{relocated: relocated}
}

func (t *leaseTable) slab(num uint64) *slab {
	if t.lastSlab != nil && t.lastNum == num {
		return t.lastSlab
	}
	sl := t.slabs[num]
	if sl != nil {
		t.lastNum, t.lastSlab = num, sl
	}
	return sl
}

// get returns the entry of id, or nil.
func (t *leaseTable) get(id ID) *entry {
	if sl := t.slab(uint64(id) >> slabBits); sl != nil {
		if e := &sl.e[id&slabMask]; e.id == id && id != 0 {
			return e
		}
		return nil
	}
	if len(t.sparse) == 0 {
		return nil
	}
	return t.sparse[id]
}

// add returns a zeroed entry for id, a new ID higher than any added before.
// The caller fills it in, id first.
func (t *leaseTable) add(id ID) *entry {
	num := uint64(id) >> slabBits
	sl := t.slab(num)
	if sl == nil {
		if t.slabs == nil {
			t.slabs = make(map[uint64]*slab)
		}
		if num > t.top && t.n > 0 {
			// The newest slab receives no more IDs: if its leases have
			// already mostly ended, its survivors move out now.
			t.thin(t.top)
		}
		if sl = t.spare; sl != nil {
			t.spare = nil
		} else {
			sl = new(slab)
		}
		t.slabs[num] = sl
		t.slabsPeak = max(t.slabsPeak, len(t.slabs))
		t.lastNum, t.lastSlab = num, sl
		t.top = num
	}
	sl.used++
	t.n++
	t.peakN = max(t.peakN, t.n)
	e := &sl.e[id&slabMask]
	e.id = id
	return e
}

// delete removes the entry of id, if any. Entries the table holds may move
// (see relocated).
func (t *leaseTable) delete(id ID) {
	num := uint64(id) >> slabBits
	sl := t.lastSlab
	if sl == nil || t.lastNum != num {
		sl = t.slabs[num]
	}
	if sl == nil {
		if _, ok := t.sparse[id]; ok {
			delete(t.sparse, id)
			t.n--
			t.sparse = idtable.Rebuilt(t.sparse, &t.sparsePeak)
		}
		return
	}
	e := &sl.e[id&slabMask]
	if e.id != id || id == 0 {
		return
	}
	*e = entry{}
	sl.used--
	t.n--
	switch {
	case num == t.top:
		// The newest slab stays even when empty: the next IDs go there.
	case sl.used == 0:
		t.dropSlab(num)
	case sl.used == lastFew && !sl.drainingInOrder():
		// Nearly drained, and not by the usual churn, which would
		// empty it soon: its last entries move out now rather than keep
		// 20 KiB alive until a sweep. Each slab crosses this line once.
		t.thin(num)
		return
	}
	if t.n*4 < t.peakN*3 && len(t.slabs)*thinSlab > t.n-len(t.sparse) {
		t.sweep()
	}
}

// sweep moves the entries of thin slabs to the sparse map and frees the
// slabs. It runs when the table has lost a quarter of its entries since the
// last sweep and its slabs are on average less than half full, so its cost,
// a pass over the slabs, is paid once per such loss: O(1) per delete,
// amortised. Slabs drained in ID order (the usual churn, where old leases
// end first) never trigger it: they stay full on average.
func (t *leaseTable) sweep() {
	var thin []uint64 // collected first: thinning rebuilds the map
	for num, sl := range t.slabs {
		if num < t.top && sl.used <= thinSlab {
			thin = append(thin, num)
		}
	}
	for _, num := range thin {
		t.thin(num)
	}
	t.peakN = t.n
}

// thin moves the entries of slab num to their own allocations in the
// sparse map and frees the slab, if it holds thinSlab entries or fewer.
func (t *leaseTable) thin(num uint64) {
	sl := t.slabs[num]
	if sl == nil || sl.used > thinSlab {
		return
	}
	if sl.used > 0 && t.sparse == nil {
		t.sparse = make(map[ID]*entry)
	}
	for i := range sl.e {
		if sl.e[i].id == 0 {
			continue
		}
		e := new(entry)
		*e = sl.e[i]
		t.sparse[e.id] = e
		t.relocated(e)
	}
	t.sparsePeak = max(t.sparsePeak, len(t.sparse))
	t.dropSlab(num)
}

func (t *leaseTable) dropSlab(num uint64) {
	sl := t.slabs[num]
	delete(t.slabs, num)
	if t.lastSlab == sl {
		t.lastSlab = nil
	}
	switch {
	case len(t.slabs) < spareFrom:
		// A small table: a spare would cost more than its leases.
		t.spare = nil
	case t.spare == nil:
		if sl.used > 0 {
			clear(sl.e[:]) // thinned: its entries live elsewhere now
			sl.used = 0
		}
		t.spare = sl
	}
	t.slabs = idtable.Rebuilt(t.slabs, &t.slabsPeak)
}

// ascend calls f with every entry, in ID order.
func (t *leaseTable) ascend(f func(e *entry)) {
	nums := make([]uint64, 0, len(t.slabs))
	for num := range t.slabs {
		nums = append(nums, num)
	}
	slices.Sort(nums)
	sparse := make([]*entry, 0, len(t.sparse))
	for _, e := range t.sparse {
		sparse = append(sparse, e)
	}
	slices.SortFunc(sparse, func(a, b *entry) int { return cmp.Compare(a.id, b.id) })
	for _, num := range nums {
		sl := t.slabs[num]
		// Sparse entries below this slab come first.
		for len(sparse) > 0 && uint64(sparse[0].id)>>slabBits < num {
			f(sparse[0])
			sparse = sparse[1:]
		}
		for i := range sl.e {
			if sl.e[i].id != 0 {
				f(&sl.e[i])
			}
		}
	}
	for _, e := range sparse {
		f(e)
	}
}
