// Package heap is the indexed binary min-heap that the service's expiry
// queue, the claim broker's queues and the fake clock's timers share.
//
// Entries are ordered by (Key, Seq): an int64 key (a deadline in
// nanoseconds) with a sequence number that breaks ties, so the order is
// total and deterministic. Both sit inline in the heap's array next to the
// record they stand for, so sifting compares integers in one contiguous
// array instead of chasing pointers or calling methods. The heap tells each
// record its position as it moves, so a record can be removed or re-keyed in
// O(log n) from outside. The array is given back when a burst has drained:
// memory follows what is queued, not the peak.
package heap

// Entry is one element: the sort key, the tie-breaker and the record.
type Entry[P any] struct {
	Key int64
	Seq uint64
	Val P
}

func (a *Entry[P]) less(b *Entry[P]) bool {
	return a.Key < b.Key || (a.Key == b.Key && a.Seq < b.Seq)
}

// Heap is an indexed min-heap of entries. Make one with New. A Heap is not
// safe for concurrent use.
//
// It is 4-ary: each entry has four children, so a heap of a million is 10
// levels deep instead of 20. Sifting an entry down compares four adjacent
// keys per level (two cache lines of the array) but moves, and tells the
// moved records of, half as many entries; with records scattered in
// memory, each of those notifications is the expensive part.
type Heap[P any] struct {
	s     []Entry[P]
	moved func(P, int)
	held  bool // Hold: Remove keeps the array
}

// New returns an empty heap that calls moved with a record and its new index
// whenever the record's entry moves, and with -1 when it leaves the heap.
func New[P any](moved func(val P, index int)) Heap[P] {
	return Heap[P]{moved: moved}
}

// minShrink is the capacity below which the array is never replaced.
const minShrink = 256

// Len returns the number of entries.
func (h *Heap[P]) Len() int { return len(h.s) }

// At returns a pointer to entry i, to read it or to change its Key before a
// Fix. It must not be kept across other calls.
func (h *Heap[P]) At(i int) *Entry[P] { return &h.s[i] }

// Push adds an entry.
func (h *Heap[P]) Push(key int64, seq uint64, val P) {
	h.s = append(h.s, Entry[P]{Key: key, Seq: seq, Val: val})
	h.up(len(h.s) - 1)
}

// Pop removes and returns the least entry; the heap must not be empty.
func (h *Heap[P]) Pop() Entry[P] { return h.Remove(0) }

// Remove removes and returns entry i.
func (h *Heap[P]) Remove(i int) Entry[P] {
	e := h.s[i]
	n := len(h.s) - 1
	if i != n {
		h.s[i] = h.s[n]
	}
	h.s[n] = Entry[P]{} // drop the reference, so the record can be collected
	h.s = h.s[:n]
	if i != n {
		h.Fix(i)
	}
	h.moved(e.Val, -1)
	if !h.held {
		h.trim()
	}
	return e
}

// trim gives back the array a burst left behind once most of it is unused.
func (h *Heap[P]) trim() {
	if n := len(h.s); cap(h.s) > minShrink && n <= cap(h.s)/2 {
		h.s = append(make([]Entry[P], 0, max(n+n/4, minShrink)), h.s...)
	}
}

// Hold keeps Remove from giving back the array until Release. Draining a
// burst of a million gives it back a dozen times on the way down, each time
// copying what is left, a stall of milliseconds for whoever removes that
// entry; under Hold it is given back once, at Release, when little is left.
func (h *Heap[P]) Hold() { h.held = true }

// Release ends Hold and gives back the array if most of it is unused.
func (h *Heap[P]) Release() {
	h.held = false
	h.trim()
}

// Fix restores the order after entry i's Key changed.
func (h *Heap[P]) Fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

// Each calls f with every record, in no particular order, until f returns
// false. f must not change the heap.
func (h *Heap[P]) Each(f func(P) bool) {
	for i := range h.s {
		if !f(h.s[i].Val) {
			return
		}
	}
}

// arity is the number of children of an entry.
const arity = 4

func (h *Heap[P]) up(i int) {
	e := h.s[i]
	for i > 0 {
		p := (i - 1) / arity
		if !e.less(&h.s[p]) {
			break
		}
		h.s[i] = h.s[p]
		h.moved(h.s[i].Val, i)
		i = p
	}
	h.s[i] = e
	h.moved(e.Val, i)
}

// down sifts entry i0 down and reports whether it moved.
func (h *Heap[P]) down(i0 int) bool {
	e := h.s[i0]
	i, n := i0, len(h.s)
	for {
		first := arity*i + 1
		if first >= n {
			break
		}
		c := first // the least child
		for k := first + 1; k < min(first+arity, n); k++ {
			if h.s[k].less(&h.s[c]) {
				c = k
			}
		}
		if !h.s[c].less(&e) {
			break
		}
		h.s[i] = h.s[c]
		h.moved(h.s[i].Val, i)
		i = c
	}
	h.s[i] = e
	h.moved(e.Val, i)
	return i > i0
}
