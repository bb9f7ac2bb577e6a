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

// TestItemHeapAgainstSort pushes, pops and removes at random and checks the
// heap against a sorted slice, and every item's recorded index.
func TestItemHeapAgainstSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h itemHeap
	var ref []heapEntry
	sortRef := func() {
		slices.SortFunc(ref, func(a, b heapEntry) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.id, b.id)) })
	}
	var next ItemID
	for range 5000 {
		switch r := rng.IntN(10); {
		case r < 5 || len(ref) == 0:
			next++
			it := &item{id: next, index: -1}
			key := rng.Int64N(50)
			h.push(key, it)
			ref = append(ref, heapEntry{key: key, id: it.id, it: it})
		case r < 8:
			sortRef()
			require.Same(t, ref[0].it, h.pop())
			require.Equal(t, -1, ref[0].it.index)
			ref = ref[1:]
		default:
			i := rng.IntN(len(ref))
			h.remove(ref[i].it)
			require.Equal(t, -1, ref[i].it.index)
			ref = slices.Delete(ref, i, i+1)
		}
		require.Equal(t, len(ref), h.Len())
		for i, e := range h.entries {
			require.Equal(t, i, e.it.index)
			if i > 0 {
				require.False(t, e.less(h.entries[(i-1)/2]), "heap order at %d", i)
			}
		}
	}
}

// TestReadyQueueAgainstSort pushes keys that mostly grow, some out of
// order, and checks that pops come out sorted by (key, ID).
func TestReadyQueueAgainstSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var r readyQueue
	var ref []heapEntry // kept sorted
	byKeyID := func(a, b heapEntry) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.id, b.id)) }
	var next ItemID
	var clock int64
	for i := range 6000 {
		if (rng.IntN(3) > 0 && i < 5000) || len(ref) == 0 {
			next++
			clock += rng.Int64N(3)
			key := clock
			if rng.IntN(10) == 0 {
				key -= rng.Int64N(20) // out of order
			}
			it := &item{id: next, index: -1}
			r.push(key, it)
			e := heapEntry{key: key, id: it.id, it: it}
			at, _ := slices.BinarySearchFunc(ref, e, byKeyID)
			ref = slices.Insert(ref, at, e)
		} else {
			require.Same(t, ref[0].it, r.pop())
			ref = ref[1:]
		}
		require.Equal(t, len(ref), r.Len())
	}
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

// TestArraysShrinkAfterAPeak: a heap and a ready queue that held many
// items and fell to a few keep an array in proportion to the few.
func TestArraysShrinkAfterAPeak(t *testing.T) {
	const peak, left = 10000, 10
	var (
		h     itemHeap
		r     readyQueue
		items []*item
	)
	for i := range peak {
		it := &item{id: ItemID(i + 1), index: -1}
		items = append(items, it)
		h.push(int64(peak-i), it)
	}
	for _, it := range items[left:] {
		h.remove(it)
	}
	require.Equal(t, left, h.Len())
	assert.LessOrEqual(t, cap(h.entries), minShrink, "heap array after the peak")
	for i, e := range h.entries {
		require.Equal(t, i, e.it.index, "positions survive the move")
	}
	for range left {
		h.pop()
	}

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
