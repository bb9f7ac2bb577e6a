package claim

// readyQueue holds a queue's visible items in claim order: by VisibleAt,
// then ID. Items nearly always become visible in that order (each operation
// settles everything due before it adds anything), so they go to a FIFO and
// a claim takes the FIFO's head in O(1); the few that arrive out of order (a
// rolled-back claim, a claim lost while a call was under way) go to a heap,
// and a claim takes the lesser of the two heads. Both give memory back when
// the queue drains: the FIFO's array shrinks once its live part fills a
// quarter of it, the heap's as internal/heap does. The heap is made on the
// first item out of order, so that the many queues that never see one do
// not carry it. The zero readyQueue is empty and ready to use.
type readyQueue struct {
	fifo []itemEntry // fifo[head:] in order
	head int
	late *itemHeap // nil until an item arrives out of order
}

func (r *readyQueue) Len() int { return len(r.fifo) - r.head + r.lateLen() }

func (r *readyQueue) lateLen() int {
	if r.late == nil {
		return 0
	}
	return r.late.Len()
}

func (r *readyQueue) push(key int64, it *item) {
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
	r.fifo = append(r.fifo, e)
}

// pop removes and returns the first item; r must not be empty.
func (r *readyQueue) pop() *item {
	if r.head == len(r.fifo) || (r.lateLen() > 0 && before(r.late.h.At(0), &r.fifo[r.head])) {
		return r.late.pop()
	}
	it := r.fifo[r.head].Val
	r.fifo[r.head] = itemEntry{}
	r.head++
	switch live := len(r.fifo) - r.head; {
	case cap(r.fifo) > minShrink && live <= cap(r.fifo)/4:
		r.fifo, r.head = moved(r.fifo[r.head:]), 0
	case r.head >= 1024 && r.head*2 >= len(r.fifo):
		// Slide the live half down so the array does not grow forever.
		n := copy(r.fifo, r.fifo[r.head:])
		clear(r.fifo[n:])
		r.fifo, r.head = r.fifo[:n], 0
	}
	it.index = -1
	return it
}
