package lease

// expiryHeap is an indexed min-heap of live leases ordered by the next
// instant the service must act on them (expiry, or keep-alive renewal), ties
// broken by ID so that equal deadlines are handled in grant order. Each entry
// keeps its index, so renew is heap.Fix and revoke is heap.Remove: O(log n).
// It implements container/heap.Interface.
type expiryHeap []*entry

func (h expiryHeap) Len() int { return len(h) }

func (h expiryHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	return a.due < b.due || (a.due == b.due && a.id < b.id)
}

func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = int32(i)
	h[j].index = int32(j)
}

func (h *expiryHeap) Push(x any) {
	e := x.(*entry)
	e.index = int32(len(*h))
	*h = append(*h, e)
}

func (h *expiryHeap) Pop() any {
	old := *h
	n := len(old) - 1
	e := old[n]
	old[n] = nil // let the entry be collected once it leaves the ended record
	e.index = -1
	*h = old[:n]
	return e
}
