package lease

// endedRecord remembers the most recently ended leases, oldest evicted first,
// so that a call on a lease that is gone can still tell expired from
// revoked. Its size is fixed, so a long-running service never grows.
//
// An ended entry keeps its slot here in its heap index, which it no longer
// needs, as -2-slot, so that the lease table can move it (relocated).
type endedRecord struct {
	buf  []*entry
	next int
}

func newEndedRecord(capacity int) endedRecord {
	return endedRecord{buf: make([]*entry, capacity)}
}

// add remembers e and returns the entry it evicted, if any (e itself when
// the record has no room at all).
func (r *endedRecord) add(e *entry) (evicted *entry) {
	if len(r.buf) == 0 {
		return e
	}
	evicted = r.buf[r.next]
	r.buf[r.next] = e
	e.index = int32(-2 - r.next)
	r.next++
	if r.next == len(r.buf) {
		r.next = 0
	}
	return evicted
}

// relocated repoints e's slot after the lease table moved e.
func (r *endedRecord) relocated(e *entry) {
	if i := -2 - int(e.index); i >= 0 && i < len(r.buf) {
		r.buf[i] = e
	}
}

// each calls f with every remembered entry, oldest ending first.
func (r *endedRecord) each(f func(e *entry)) {
	for i := range r.buf {
		if e := r.buf[(r.next+i)%len(r.buf)]; e != nil {
			f(e)
		}
	}
}
