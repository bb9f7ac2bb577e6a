package keylock

import (
	"time"

	"github.com/leasehold/lease"
)

// delayRecord remembers, per lock name, the lease that last held it and its
// latest confirmed expiry, for the lock-delay. It is not a record of who
// holds a lock (the service is): it only tells whether the lease that ended
// last ended by expiry, and when.
//
// The Locks call the backend without holding their mutex, so the record
// lags the service: between a call that extends a lease of a name (an
// acquisition or a renewal) reaching the service and the call recording
// the answer, the service may know a later expiry than the record. Such
// calls are counted as under way, with the earliest expiry any of them can
// set: a lease that one of them extended cannot have expired before that
// instant, so an expiry seen earlier is exactly the recorded one.
//
// Records of names that nobody acquires again would pile up, so once the
// record doubles in size it drops every record whose delay is over.
// The record is guarded by Locks.mu.
type delayRecord struct {
	m       map[string]nameRecord
	sweepAt int
}

type nameRecord struct {
	id        lease.ID  // the last lease recorded holding the name; 0 for none
	expiresAt time.Time // its latest confirmed expiry
	setAt     time.Time // when the service set expiresAt, on its time
	underWay  int       // calls under way that may extend a lease of the name
	earliest  time.Time // the earliest expiry those calls can set
	// crowded says calls of the name overlapped since it was last quiet,
	// so their answers may be recorded in another order than the service
	// gave them.
	crowded bool
}

const minSweep = 64

func newDelayRecord() delayRecord {
	return delayRecord{m: make(map[string]nameRecord), sweepAt: minSweep}
}

func (r *delayRecord) get(name string) nameRecord { return r.m[name] }

// begin counts a call under way that extends a lease of name, sent at a
// time from which the lease cannot expire before earliest.
func (r *delayRecord) begin(name string, earliest time.Time) {
	n := r.m[name]
	if n.underWay == 0 || earliest.Before(n.earliest) {
		n.earliest = earliest
	}
	if n.underWay > 0 {
		n.crowded = true
	}
	n.underWay++
	r.m[name] = n
}

// end uncounts a call begun with begin.
func (r *delayRecord) end(name string) {
	n := r.m[name]
	n.underWay--
	if n.underWay == 0 {
		n.crowded = false
	}
	r.put(name, n)
}

// held records that the service, at the instant at, set the expiry of
// lease id, which holds name, to expiresAt. Answers can be recorded out of
// order, so a lease never replaces a later one (IDs grow with every grant)
// and an answer never replaces a later one. Of two answers given at the
// same instant, the one recorded last is the service's last if the calls
// did not overlap; if they did, the later expiry is kept, which can only
// make a delay longer than it is.
func (r *delayRecord) held(name string, id lease.ID, expiresAt, at time.Time, delay time.Duration) {
	n := r.m[name]
	switch {
	case id < n.id || (id == n.id && at.Before(n.setAt)):
		return
	case id > n.id || at.After(n.setAt) || !n.crowded || expiresAt.After(n.expiresAt):
		n.id, n.expiresAt, n.setAt = id, expiresAt, at
	}
	r.m[name] = n
	if len(r.m) < r.sweepAt {
		return
	}
	for k, n := range r.m {
		if n.underWay == 0 && !at.Before(n.expiresAt.Add(delay)) {
			delete(r.m, k)
		}
	}
	r.sweepAt = max(2*len(r.m), minSweep)
}

// forget drops name's record if it is still about lease id.
func (r *delayRecord) forget(name string, id lease.ID) {
	if n, ok := r.m[name]; ok && n.id == id {
		n.id, n.expiresAt, n.setAt = 0, time.Time{}, time.Time{}
		r.put(name, n)
	}
}

// put stores n, or deletes it when it records nothing.
func (r *delayRecord) put(name string, n nameRecord) {
	if n.id == 0 && n.underWay == 0 {
		delete(r.m, name)
		return
	}
	r.m[name] = n
}
