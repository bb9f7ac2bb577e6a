package claim

// itemHeap is an indexed min-heap of items by (key, ID): each item keeps
// its position so that it can be removed in O(log n). The key and ID sit in
// the heap's own array, so sifting through 100,000 items compares without
// touching the items. An item is in at most one heap at a time: its queue's
// ready heap or the delayed heap (keyed by VisibleAt), or the claims heap
// (keyed by its claim's expiry). The array shrinks when the heap falls to a
// quarter of it.
type itemHeap struct {
	entries []heapEntry
}

type heapEntry struct {
	key int64
	id  ItemID
	it  *item
}

func (e heapEntry) less(f heapEntry) bool {
	return e.key < f.key || (e.key == f.key && e.id < f.id)
}

func (h *itemHeap) Len() int { return len(h.entries) }

// head returns the least key and its item; the heap must not be empty.
func (h *itemHeap) head() (int64, *item) { return h.entries[0].key, h.entries[0].it }

func (h *itemHeap) push(key int64, it *item) {
	h.entries = append(h.entries, heapEntry{key: key, id: it.id, it: it})
	h.up(len(h.entries) - 1)
}

// pop removes and returns the item with the least key.
func (h *itemHeap) pop() *item { return h.removeAt(0) }

// remove removes it, which must be in h.
func (h *itemHeap) remove(it *item) { h.removeAt(it.index) }

func (h *itemHeap) removeAt(i int) *item {
	it := h.entries[i].it
	n := len(h.entries) - 1
	if i != n {
		h.set(i, h.entries[n])
	}
	h.entries[n] = heapEntry{}
	h.entries = h.entries[:n]
	if i != n {
		if !h.down(i) {
			h.up(i)
		}
	}
	h.entries = shrink(h.entries)
	it.index = -1
	return it
}

func (h *itemHeap) set(i int, e heapEntry) {
	h.entries[i] = e
	e.it.index = i
}

func (h *itemHeap) up(i int) {
	e := h.entries[i]
	for i > 0 {
		p := (i - 1) / 2
		if !e.less(h.entries[p]) {
			break
		}
		h.set(i, h.entries[p])
		i = p
	}
	h.set(i, e)
}

// down sifts entry i down and reports whether it moved.
func (h *itemHeap) down(i0 int) bool {
	e := h.entries[i0]
	i, n := i0, len(h.entries)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h.entries[r].less(h.entries[c]) {
			c = r
		}
		if !h.entries[c].less(e) {
			break
		}
		h.set(i, h.entries[c])
		i = c
	}
	h.set(i, e)
	return i > i0
}
