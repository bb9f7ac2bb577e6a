package lease

// endedRecord remembers the most recently ended leases, oldest evicted first,
// so that a call on a lease that is gone can still tell expired from
// revoked. Its size is fixed, so a long-running service never grows.
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
	r.next++
	if r.next == len(r.buf) {
		r.next = 0
	}
	return evicted
}
