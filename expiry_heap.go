package lease

import "github.com/leasehold/lease/internal/heap"

// The expiry queue is an internal/heap of live leases keyed by the instant
// the service must next look at them, ties broken by ID so equal deadlines
// are handled in grant order.
//
// A lease's key in the heap may be earlier than its real deadline (e.due()):
// renewals that push a deadline later leave the heap alone, which makes the
// common renew O(1), and settle re-keys an entry when it surfaces early. The
// invariant is key <= e.due(), so the head is never later than the earliest
// real deadline.
func newExpiryHeap() heap.Heap[*entry] {
	return heap.New(func(e *entry, i int) { e.index = int32(i) })
}
