package lease

// expiryHeap is an indexed min-heap of live leases ordered by the instant the
// service must next look at them, ties broken by ID so equal deadlines are
// handled in grant order. It implements container/heap.Interface.
//
// Each slot carries its key inline, so sifting reads one contiguous array
// instead of chasing entry pointers. A slot's key may be earlier than the
// entry's real deadline (e.due): renewals that push a deadline later leave
// the heap alone, which makes the common renew O(1), and settle re-keys a
// slot when it surfaces early. The invariant is slot.due <= slot.e.due, so
// the head is never later than the earliest real deadline.
type expiryHeap []slot

type slot struct {
	due int64
	id  ID
	e   *entry
}

func (h expiryHeap) Len() int { return len(h) }

func (h expiryHeap) Less(i, j int) bool {
	return h[i].due < h[j].due || (h[i].due == h[j].due && h[i].id < h[j].id)
}

func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].e.index = int32(i)
	h[j].e.index = int32(j)
}

func (h *expiryHeap) Push(x any) {
	e := x.(*entry)
	e.index = int32(len(*h))
	*h = append(*h, slot{due: e.due, id: e.id, e: e})
}

func (h *expiryHeap) Pop() any {
	old := *h
	n := len(old) - 1
	e := old[n].e
	old[n] = slot{} // let the entry be collected once it leaves the ended record
	e.index = -1
	*h = old[:n]
	if c := cap(old); c > minShrink && n <= c/2 {
		// Most leases ended: give back the array a burst left behind.
		*h = append(make(expiryHeap, 0, max(n+n/4, minShrink)), old[:n]...)
	}
	return e
}

// minShrink is the capacity below which the heap's array is never shrunk.
const minShrink = 256
