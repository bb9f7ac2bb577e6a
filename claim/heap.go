package claim

import "github.com/leasehold/lease/internal/heap"

// itemHeap is the module's indexed heap (internal/heap) of items, keyed by
// a time in nanoseconds since the Memory's epoch with the item's ID as the
// tie-breaker, so equal times come out in enqueue order. Each item keeps its
// position in its index, so that it can be removed in O(log n). An item is in
// at most one heap at a time: its queue's late heap or the delayed heap
// (keyed by VisibleAt), or the claims heap (keyed by its claim's expiry).
// The zero itemHeap is empty and ready to use.
type itemHeap struct {
	h    heap.Heap[*item]
	made bool // h was made by heap.New, which the zero Heap is not
}

// itemEntry is one entry of an itemHeap, and of a ready queue's FIFO.
type itemEntry = heap.Entry[*item]

func setIndex(it *item, i int) { it.index = i }

func (h *itemHeap) Len() int { return h.h.Len() }

// head returns the least key and its item; the heap must not be empty.
func (h *itemHeap) head() (int64, *item) {
	e := h.h.At(0)
	return e.Key, e.Val
}

func (h *itemHeap) push(key int64, it *item) {
	if !h.made {
		h.h, h.made = heap.New(setIndex), true
	}
	h.h.Push(key, uint64(it.id), it)
}

// pop removes and returns the item with the least key.
func (h *itemHeap) pop() *item { return h.h.Pop().Val }

// remove removes it, which must be in h.
func (h *itemHeap) remove(it *item) { h.h.Remove(it.index) }

// before reports whether e comes before f in claim order: by key, then ID.
func before(e, f *itemEntry) bool {
	return e.Key < f.Key || (e.Key == f.Key && e.Seq < f.Seq)
}
