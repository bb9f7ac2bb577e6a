package claim

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/internal/idtable"
)

// byKeyID is claim order: by key, then ID.
func byKeyID(a, b itemEntry) int {
	return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Val.id, b.Val.id))
}

// TestItemHeapAgainstSort pushes, pops and removes at random and checks the
// heap against a sorted slice: the heap itself is internal/heap's (tested
// there); this checks how claim wires it, with the item's ID breaking ties
// and every item's index kept where Remove needs it.
func TestItemHeapAgainstSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h itemHeap
	var ref []itemEntry
	var next ItemID
	for range 5000 {
		switch r := rng.IntN(10); {
		case r < 5 || len(ref) == 0:
			next++
			it := &item{id: next, index: -1, state: Visible}
			key := rng.Int64N(50)
			h.push(key, it)
			ref = append(ref, itemEntry{Key: key, Val: it})
		case r < 8:
			slices.SortFunc(ref, byKeyID)
			key, it := h.head()
			require.Equal(t, ref[0].Key, key)
			require.Same(t, ref[0].Val, it)
			require.Same(t, it, h.pop())
			require.Equal(t, -1, ref[0].Val.index)
			ref = ref[1:]
		default:
			i := rng.IntN(len(ref))
			h.remove(ref[i].Val)
			require.Equal(t, -1, ref[i].Val.index)
			ref = slices.Delete(ref, i, i+1)
		}
		require.Equal(t, len(ref), h.Len())
		for _, e := range ref {
			require.Same(t, e.Val, h.h.At(e.Val.index).Val, "index of item %d", e.Val.id)
		}
	}
}

// TestReadyQueueAgainstSort pushes keys that mostly grow, some out of
// order, and checks that pops come out sorted by (key, ID).
func TestReadyQueueAgainstSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var r readyQueue
	var ref []itemEntry // kept sorted
	var next ItemID
	var clock int64
	late := 0
	for i := range 6000 {
		if (rng.IntN(3) > 0 && i < 5000) || len(ref) == 0 {
			next++
			clock += rng.Int64N(3)
			key := clock
			if rng.IntN(10) == 0 {
				key -= rng.Int64N(20) // out of order
			}
			it := &item{id: next, index: -1, state: Visible}
			r.push(key, it)
			e := itemEntry{Key: key, Val: it}
			at, _ := slices.BinarySearchFunc(ref, e, byKeyID)
			ref = slices.Insert(ref, at, e)
		} else {
			late = max(late, r.lateLen())
			got := r.pop()
			require.Same(t, ref[0].Val, got)
			require.Equal(t, -1, got.index)
			ref = ref[1:]
		}
		require.Equal(t, len(ref), r.Len())
	}
	assert.Positive(t, late, "the late heap was used")
}

// TestItemTableAgainstMap adds items in ID order, as Enqueue does, and
// deletes them at random, and checks every lookup against a map.
func TestItemTableAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var x idtable.Table[item]
	ref := map[ItemID]*item{}
	var next ItemID
	for range 20000 {
		if rng.IntN(2) == 0 {
			next += 1 + ItemID(rng.IntN(3)) // IDs deleted before they were seen, too
			it := &item{id: next}
			x.Put(uint64(it.id), it)
			ref[it.id] = it
		} else if next > 0 {
			id := ItemID(rng.Int64N(int64(next))) + 1
			x.Delete(uint64(id))
			delete(ref, id)
		}
		id := ItemID(rng.Int64N(int64(next) + 2))
		require.Equal(t, ref[id], x.Get(uint64(id)), "id %d", id)
	}
	for id := range next + 2 {
		require.Equal(t, ref[id], x.Get(uint64(id)), "id %d", id)
	}
	require.Equal(t, len(ref), x.Len())
}

// TestArraysShrinkAfterAPeak: a ready queue that held many items and fell
// to a few keeps a FIFO array in proportion to the few, and items keep their
// heap positions when a heap gives its array back (internal/heap checks
// the size of that array).
func TestArraysShrinkAfterAPeak(t *testing.T) {
	const peak, left = 10000, 10
	var items []*item
	var h itemHeap
	for i := range peak {
		it := &item{id: ItemID(i + 1), index: -1, state: Visible}
		items = append(items, it)
		h.push(int64(peak-i), it)
	}
	for _, it := range items[left:] {
		h.remove(it)
	}
	require.Equal(t, left, h.Len())
	for _, it := range items[:left] {
		require.Same(t, it, h.h.At(it.index).Val, "positions survive the move")
	}
	for range left {
		h.pop()
	}

	var r readyQueue
	for i, it := range items {
		r.push(int64(i), it)
	}
	for range peak - left {
		r.pop()
	}
	require.Equal(t, left, r.Len())
	assert.LessOrEqual(t, cap(r.fifo), minShrink, "FIFO array after the peak")
	for i := range left {
		require.Same(t, items[peak-left+i], r.pop())
	}
}

// TestLeanMapShrinks: a map that held many entries and fell to a few is
// moved into one sized for the few, keeping every entry.
func TestLeanMapShrinks(t *testing.T) {
	var m leanMap[int, int]
	for i := range 1000 {
		m.put(i, i)
	}
	for i := range 990 {
		m.delete(i)
	}
	assert.Less(t, m.peak, minShrink, "moved since the peak")
	for i := range 1000 {
		want := 0
		if i >= 990 {
			want = i
		}
		require.Equal(t, want, m.get(i))
	}
	assert.Len(t, m.m, 10)
}
