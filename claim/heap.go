package claim

import "container/heap"

// itemHeap is an indexed min-heap of items: each item keeps its position so
// that it can be removed in O(log n). An item is in at most one heap at a
// time: its queue's ready heap, the delayed heap or the claims heap.
type itemHeap struct {
	items []*item
	less  func(a, b *item) bool
}

func visibleFirst(a, b *item) bool {
	if !a.visibleAt.Equal(b.visibleAt) {
		return a.visibleAt.Before(b.visibleAt)
	}
	return a.id < b.id
}

// expiresFirst orders claimed items by the expiry of their claim.
func expiresFirst(a, b *item) bool {
	if !a.hold.expires.Equal(b.hold.expires) {
		return a.hold.expires.Before(b.hold.expires)
	}
	return a.id < b.id
}

func (h *itemHeap) Len() int           { return len(h.items) }
func (h *itemHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *itemHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].index = i
	h.items[j].index = j
}
func (h *itemHeap) Push(x any) {
	it := x.(*item)
	it.index = len(h.items)
	h.items = append(h.items, it)
}
func (h *itemHeap) Pop() any {
	n := len(h.items) - 1
	it := h.items[n]
	h.items[n] = nil
	h.items = h.items[:n]
	it.index = -1
	return it
}

func (h *itemHeap) head() *item { return h.items[0] }

func (h *itemHeap) push(it *item)   { heap.Push(h, it) }
func (h *itemHeap) pop() *item      { return heap.Pop(h).(*item) }
func (h *itemHeap) remove(it *item) { heap.Remove(h, it.index) }
