package lease

import (
	"slices"

	"github.com/google/btree"
)

// leaseTable maps IDs to entries: the live leases and the remembered ended
// ones. IDs are issued densely in increasing order, so entries are stored
// inline in slabs of 256 consecutive IDs, found through a directory: a slice
// indexed by slab number less the lowest one held. A lookup reads the
// directory slot (which stays in cache) and then the entry itself: with a
// million leases that is one cache miss, where a slab of pointers to
// separately allocated entries cost two dependent ones, and hashing the slab
// number into a map cost a fifth of a renewal at random.
//
// An entry is 64 bytes (see entry in service.go) and a slab exactly 16 KiB,
// an allocation of its own and so aligned: every entry sits on one cache
// line, and a lookup at random reads one line, not the two an 80-byte entry
// spanned. The slab's count of entries in use is kept in its directory
// slot, not in the slab, which would have pushed it into an 18 KiB size
// class.
//
// A slab whose IDs have mostly ended (long-lived leases among many short
// ones) would keep 16 KiB alive for a few entries, so once the table has
// lost a quarter of its entries and its slabs are on average less than half
// full, the entries of such slabs move to their own allocations, found
// through a btree by ID (the sparse index), and the slabs are freed: memory
// follows the leases held, not the IDs ever issued. A btree rather than a
// map because a Go map never gives memory back: it had to be copied whole
// once it had shrunk to a quarter, a stall of milliseconds under the lock
// in a burst of expiries, where a btree frees its nodes as it shrinks.
//
// The directory spans from the lowest slab held to the newest; when IDs
// have moved on so far that it would span more than maxSpan slots, the
// lowest slabs move out to the sparse index the same way, however full, so
// the directory too follows the slabs held. Moving an entry changes its
// address, so the table tells the service (relocated), which repoints the
// heap slot or ended-record slot that refers to it. Nothing else keeps an
// entry's address across calls.
type leaseTable struct {
	// dir[i] is the slab of number base+i, nil where there is none: a
	// lookup indexes it rather than hashing. It spans from the lowest slab
	// held to the newest, and never more than maxSpan of the slabs held.
	dir    []slabRef
	base   uint64
	nslabs int // non-nil slabs in dir
	sparse *btree.BTreeG[sparseEntry]
	top    uint64 // the slab receiving new IDs
	// spare is the last slab freed, cleared, for the next one needed:
	// steady churn then allocates nothing. Only a table of spareFrom slabs
	// or more keeps one.
	spare *slab
	n     int // entries held
	peakN int // most entries held since the last sweep
	// sweepAt is the next slab a sweep under way looks at; sweeping is
	// set while one is, and credit is how many entries it may move before
	// the next delete (see sweepStep).
	sweepAt  uint64
	sweeping bool
	credit   int
	// relocated is called with an entry's new address after a sweep moved
	// it.
	relocated func(e *entry)
}

// slabRef is a directory slot: a slab and how many of its entries are in use.
type slabRef struct {
	sl   *slab
	used int
}

const (
	slabBits = 8
	slabSize = 1 << slabBits
	slabMask = slabSize - 1
	// A sweep moves the entries of slabs holding this many or fewer to the
	// sparse index. An entry of its own costs 64 bytes plus about 30 in
	// the index; a slab costs 64 bytes per slot, so below half full the
	// move saves memory.
	thinSlab = slabSize / 2
	// A slab left with this many entries is thinned at once, sweep or not.
	lastFew = slabSize / 32
	// A table of fewer slabs keeps no spare: it would cost more than a
	// quarter of what the leases take.
	spareFrom = 4
)

// maxSpan is how many directory slots a table of n slabs may span: an
// empty slot costs 16 bytes, so the slots between slabs never cost more
// than a few percent of the slabs themselves.
func maxSpan(n int) uint64 { return 32*uint64(n) + 64 }

type slab struct {
	e [slabSize]entry // e[i] is in use when e[i].id != 0
}

// drainingInOrder reports whether the used entries left are the slab's last
// ones: the slab is being emptied in ID order.
func (sl *slab) drainingInOrder(used int) bool {
	for i := slabSize - used; i < slabSize; i++ {
		if sl.e[i].id == 0 {
			return false
		}
	}
	return true
}

// sparseEntry is an entry held outside the slabs, found by ID.
type sparseEntry struct {
	id ID
	e  *entry
}

func newLeaseTable(relocated func(*entry)) leaseTable {
	return leaseTable{
		relocated: relocated,
		sparse:    btree.NewG(btreeDegree, func(a, b sparseEntry) bool { return a.id < b.id }),
	}
}

// ref returns the directory slot of slab num, or nil if num is outside it.
func (t *leaseTable) ref(num uint64) *slabRef {
	if i := num - t.base; i < uint64(len(t.dir)) {
		return &t.dir[i]
	}
	return nil
}

// get returns the entry of id, or nil.
func (t *leaseTable) get(id ID) *entry {
	// num-base wraps around below the directory: one comparison bounds it.
	if i := uint64(id)>>slabBits - t.base; i < uint64(len(t.dir)) {
		if sl := t.dir[i].sl; sl != nil {
			if e := &sl.e[id&slabMask]; e.id == id && id != 0 {
				return e
			}
			return nil
		}
	}
	if t.sparse.Len() == 0 {
		return nil
	}
	se, _ := t.sparse.Get(sparseEntry{id: id})
	return se.e
}

// add returns a zeroed entry for id, a new ID higher than any added before.
// The caller fills it in, id first.
func (t *leaseTable) add(id ID) *entry {
	num := uint64(id) >> slabBits
	r := t.ref(num)
	if r == nil || r.sl == nil {
		if num > t.top && t.n > 0 {
			// The newest slab receives no more IDs: if its leases have
			// already mostly ended, its survivors move out now.
			t.thin(t.top)
		}
		r = t.newSlab(num)
		t.top = num
	}
	r.used++
	t.n++
	t.peakN = max(t.peakN, t.n)
	e := &r.sl.e[id&slabMask]
	e.id = id
	return e
}

// newSlab puts an empty slab at num, above every slab held, and returns its
// slot. If the directory would then span more than maxSpan, the lowest
// slabs move out to the sparse index first, however full: IDs have moved on
// far past them.
func (t *leaseTable) newSlab(num uint64) *slabRef {
	for t.nslabs > 0 && num-t.base >= maxSpan(t.nslabs+1) {
		t.evacuate(t.base)
	}
	if t.nslabs == 0 {
		t.dir, t.base = t.dir[:0], num
	}
	for uint64(len(t.dir)) <= num-t.base {
		t.dir = append(t.dir, slabRef{})
	}
	sl := t.spare
	if sl != nil {
		t.spare = nil
	} else {
		sl = new(slab)
	}
	r := &t.dir[num-t.base]
	r.sl = sl
	t.nslabs++
	return r
}

// delete removes the entry of id, if any. Entries the table holds may move
// (see relocated).
func (t *leaseTable) delete(id ID) {
	num := uint64(id) >> slabBits
	r := t.ref(num)
	if r == nil || r.sl == nil {
		if _, ok := t.sparse.Delete(sparseEntry{id: id}); ok {
			t.n--
		}
		t.sweepStep()
		return
	}
	e := &r.sl.e[id&slabMask]
	if e.id != id || id == 0 {
		return
	}
	*e = entry{}
	r.used--
	t.n--
	switch {
	case num == t.top:
		// The newest slab stays even when empty: the next IDs go there.
	case r.used == 0:
		t.dropSlab(num)
	case r.used == lastFew && !r.sl.drainingInOrder(r.used):
		// Nearly drained, and not by the usual churn, which would
		// empty it soon: its last entries move out now rather than keep
		// 16 KiB alive until a sweep. Each slab crosses this line once.
		t.thin(num)
		return
	}
	if !t.sweeping && t.n*4 < t.peakN*3 && t.nslabs*thinSlab > t.n-t.sparse.Len() {
		t.sweeping, t.sweepAt, t.peakN, t.credit = true, t.base, t.n, 0
	}
	t.sweepStep()
}

// sweepStep advances the sweep under way, if any, by one delete's share. A
// sweep starts when the table has lost a quarter of its entries since the
// last one and its slabs are on average less than half full; it then moves
// the entries of the slabs holding half or fewer to the sparse index and
// frees those slabs, a little per later delete: each delete looks at up to
// sweepScan slabs and earns sweepCredit entries of moving, and a slab is
// moved once enough is earned. No delete moves more than one slab, and no
// run of k deletes more than k*sweepCredit entries and a slab: a whole
// sweep at once, with a million leases ended at random, moved a third of
// them in one call, and one slab per delete still moved thousands in one
// batch of the fire loop. A sweep moves at most half the entries, so it
// ends after half of them at sweepCredit per delete, long before another
// quarter is lost and the next one starts; its cost is O(1) per delete.
// Slabs drained in ID order (the usual churn, where old leases end first)
// never start one: they stay full on average. The slab receiving new IDs
// is left alone.
func (t *leaseTable) sweepStep() {
	if !t.sweeping {
		return
	}
	t.credit = min(t.credit+sweepCredit, thinSlab)
	t.sweepAt = max(t.sweepAt, t.base)
	for range sweepScan {
		if t.sweepAt >= t.top {
			t.sweeping = false
			return
		}
		r := t.ref(t.sweepAt)
		if r != nil && r.sl != nil && r.used <= thinSlab {
			if r.used > t.credit {
				return // moved at a later delete
			}
			t.credit -= r.used
			t.evacuate(t.sweepAt)
			t.sweepAt++
			return
		}
		t.sweepAt++
	}
}

const (
	// sweepScan is how many slabs a sweep step looks at.
	sweepScan = 8
	// sweepCredit is how many entries a sweep may move per delete.
	sweepCredit = 4
)

// thin moves the entries of slab num to their own allocations in the
// sparse index and frees the slab, if it holds thinSlab entries or fewer.
func (t *leaseTable) thin(num uint64) {
	if r := t.ref(num); r != nil && r.sl != nil && r.used <= thinSlab {
		t.evacuate(num)
	}
}

// evacuate moves the entries of slab num to their own allocations in the
// sparse index and frees the slab.
func (t *leaseTable) evacuate(num uint64) {
	r := t.ref(num)
	for i := range r.sl.e {
		if r.sl.e[i].id == 0 {
			continue
		}
		e := new(entry)
		*e = r.sl.e[i]
		t.sparse.ReplaceOrInsert(sparseEntry{e.id, e})
		t.relocated(e)
	}
	t.dropSlab(num)
}

func (t *leaseTable) dropSlab(num uint64) {
	r := t.ref(num)
	sl, used := r.sl, r.used
	*r = slabRef{}
	t.nslabs--
	switch {
	case t.nslabs < spareFrom:
		// A small table: a spare would cost more than its leases.
		t.spare = nil
	case t.spare == nil:
		if used > 0 {
			clear(sl.e[:]) // thinned: its entries live elsewhere now
		}
		t.spare = sl
	}
	// The directory starts at the lowest slab held.
	for len(t.dir) > 0 && t.dir[0].sl == nil {
		t.dir = t.dir[1:]
		t.base++
	}
	if cap(t.dir) > 4*len(t.dir)+64 {
		t.dir = slices.Clone(t.dir) // memory follows the slabs held
	}
}

// ascend calls f with every entry, in ID order.
func (t *leaseTable) ascend(f func(e *entry)) {
	sparse := make([]*entry, 0, t.sparse.Len())
	t.sparse.Ascend(func(se sparseEntry) bool {
		sparse = append(sparse, se.e)
		return true
	})
	for i, r := range t.dir {
		if r.sl == nil {
			continue
		}
		num := t.base + uint64(i)
		// Sparse entries below this slab come first.
		for len(sparse) > 0 && uint64(sparse[0].id)>>slabBits < num {
			f(sparse[0])
			sparse = sparse[1:]
		}
		for j := range r.sl.e {
			if r.sl.e[j].id != 0 {
				f(&r.sl.e[j])
			}
		}
	}
	for _, e := range sparse {
		f(e)
	}
}
