package claim

// readyQueue holds a queue's visible items of one priority in claim order:
// by VisibleAt, then ID. Items nearly always become visible in that order
// (each operation settles everything due before it adds anything), so they
// go to a FIFO and a claim takes the FIFO's head in O(1); the few that
// arrive out of order (a rolled-back claim, a claim lost while a call was
// under way) go to a heap, and a claim takes the lesser of the two heads.
// An item cancelled while in the FIFO stays there as a tombstone (its
// record no longer Visible) that pop skips. Both give memory back when the
// queue drains: the FIFO's array shrinks once its live part fills a quarter
// of it, the heap's as internal/heap does. The heap is made on the first
// item out of order, so that the many queues that never see one do not
// carry it. The zero readyQueue is empty and ready to use.
type readyQueue struct {
	fifo []itemEntry // fifo[head:] in order, tombstones included
	head int
	n    int       // items held, tombstones not counted
	late *itemHeap // nil until an item arrives out of order
}

// Len returns the number of items held.
func (r *readyQueue) Len() int { return r.n }

func (r *readyQueue) lateLen() int {
	if r.late == nil {
		return 0
	}
	return r.late.Len()
}

func (r *readyQueue) push(key int64, it *item) {
	r.n++
	e := itemEntry{Key: key, Seq: uint64(it.id), Val: it}
	if n := len(r.fifo); n > r.head && before(&e, &r.fifo[n-1]) {
		if r.late == nil {
			r.late = new(itemHeap)
		}
		r.late.push(key, it)
		return
	}
	if r.head > 0 && r.head == len(r.fifo) {
		r.fifo, r.head = r.fifo[:0], 0 // empty: reuse the array from the start
	}
	it.index = -1
	r.fifo = append(r.fifo, e)
}

// pop removes and returns the first item; r must not be empty.
func (r *readyQueue) pop() *item {
	r.n--
	for {
		if r.head == len(r.fifo) || (r.lateLen() > 0 && before(r.late.h.At(0), &r.fifo[r.head])) {
			return r.late.pop()
		}
		it := r.fifo[r.head].Val
		r.fifo[r.head] = itemEntry{}
		r.head++
		r.compact()
		if it.state == Visible {
			return it
		}
	}
}

// drop removes it, which r holds: from the heap if it is there, else by
// leaving a tombstone in the FIFO (the caller changes its state).
func (r *readyQueue) drop(it *item) {
	r.n--
	if it.index >= 0 {
		r.late.remove(it)
		return
	}
	if r.n == 0 {
		// Only tombstones left: let go of them.
		clear(r.fifo[r.head:])
		r.fifo, r.head = shrink(r.fifo[:0]), 0
	}
}

// compact gives back the FIFO's memory after a pop.
func (r *readyQueue) compact() {
	switch live := len(r.fifo) - r.head; {
	case cap(r.fifo) > minShrink && live <= cap(r.fifo)/4:
		r.fifo, r.head = moved(r.fifo[r.head:]), 0
	case r.head >= 1024 && r.head*2 >= len(r.fifo):
		// Slide the live half down so the array does not grow forever.
		n := copy(r.fifo, r.fifo[r.head:])
		clear(r.fifo[n:])
		r.fifo, r.head = r.fifo[:n], 0
	}
}

// each calls f with every item held, in no particular order.
func (r *readyQueue) each(f func(*item) bool) {
	for i := r.head; i < len(r.fifo); i++ {
		if it := r.fifo[i].Val; it.state == Visible {
			f(it)
		}
	}
	if r.late != nil {
		r.late.h.Each(f)
	}
}
