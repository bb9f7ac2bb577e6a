package lock

import (
	"time"

	"github.com/leasehold/lease"
)

// delayRecord remembers, per lock name, the lease that last held it and
// when that lease would expire, for the lock-delay. It is not a record of
// who holds a lock (the service is): it only tells whether the lease that
// ended last ended by expiry, and when.
//
// Records of names that nobody acquires again would pile up, so once the
// record doubles in size it drops every record whose delay is over.
type delayRecord struct {
	m       map[string]heldLease
	sweepAt int
}

type heldLease struct {
	id        lease.ID
	expiresAt time.Time
}

const minSweep = 64

func newDelayRecord() delayRecord {
	return delayRecord{m: make(map[string]heldLease), sweepAt: minSweep}
}

func (r *delayRecord) get(name string) (heldLease, bool) {
	h, ok := r.m[name]
	return h, ok
}

// held records that lease id holds name until expiresAt.
func (r *delayRecord) held(name string, id lease.ID, expiresAt, now time.Time, delay time.Duration) {
	r.m[name] = heldLease{id: id, expiresAt: expiresAt}
	if len(r.m) < r.sweepAt {
		return
	}
	for n, h := range r.m {
		if !now.Before(h.expiresAt.Add(delay)) {
			delete(r.m, n)
		}
	}
	r.sweepAt = max(2*len(r.m), minSweep)
}

// forget drops name's record if it is still about lease id.
func (r *delayRecord) forget(name string, id lease.ID) {
	if h, ok := r.m[name]; ok && h.id == id {
		delete(r.m, name)
	}
}
