package lease

// Stats are a Service's lease counts, as Stats returns them: the leases
// live now and, since the service was created, the leases granted,
// renewed, revoked and expired. It is a plain value, safe to copy and to
// keep; its Purposes slice is its own.
type Stats struct {
	// Live is the number of active leases, as ActiveCount reports it.
	Live int
	// Granted counts the leases granted.
	Granted uint64
	// Renewed counts renewals: by Renew, by RenewTTL, by KeepAlive when
	// it starts and by every keep-alive renewal the service makes.
	Renewed uint64
	// Revoked counts the leases revoked.
	Revoked uint64
	// Expired counts the leases that expired.
	Expired uint64
	// Purposes are the same counts by purpose, in Purpose order, for the
	// purposes with any: a purpose with no live lease and nothing counted
	// is left out.
	Purposes []PurposeStats
}

// PurposeStats are the counts of Stats for the leases of one purpose. It
// is a plain value, safe to copy and to keep.
type PurposeStats struct {
	Purpose Purpose
	Live    int
	Granted uint64
	Renewed uint64
	Revoked uint64
	Expired uint64
}

// Stats returns the service's lease counts. The service keeps them as it
// decides, under the lock it holds anyway, so they cost a grant, renewal or
// ending a couple of additions and need no observer; a metrics exporter
// reads them when it collects (the otel module's ObserveService does).
//
// The counts are exact and the totals never decrease: each granted,
// renewed, revoked or expired lease is counted once, when the service
// decides it. Refusals are not counted; an Observer sees them as
// EventDenied. Like every call, Stats first settles what is due, so a
// lease past its expiry is counted as expired, never as live, whether or
// not the timer has fired; the notifications of the leases it expires are
// delivered on the caller's goroutine, as ActiveCount's are. Otherwise it
// only copies the counts, under the lock, and is cheap enough for a
// metrics collector.
//
// A service made by Restore counts from the snapshot's live set: its Live
// counts start at the restored leases and its other counts at zero, as
// nothing was granted, renewed or ended by this service yet. After Close,
// Stats reports the totals reached and no live lease, as ActiveCount does.
func (s *Service) Stats() Stats {
	s.mu.Lock()
	defer s.unlock()
	_, err := s.begin("stats", 0) // settles what is due; a closed service keeps its totals
	closed := err != nil
	var st Stats
	for p := range s.counts {
		c := &s.counts[p]
		if *c == (purposeCounts{}) {
			continue
		}
		ps := PurposeStats{Purpose: Purpose(p),
			Granted: c.granted, Renewed: c.renewed, Revoked: c.revoked, Expired: c.expired}
		if !closed {
			ps.Live = c.live()
		}
		st.Live += ps.Live
		st.Granted += ps.Granted
		st.Renewed += ps.Renewed
		st.Revoked += ps.Revoked
		st.Expired += ps.Expired
		st.Purposes = append(st.Purposes, ps)
	}
	return st
}

// purposeCounts are the counts the service keeps for one purpose: the
// decisions made, and the live leases it restored from a snapshot. Guarded
// by the service's lock.
type purposeCounts struct {
	restored                           int
	granted, renewed, revoked, expired uint64
}

// live returns the number of live leases: every lease restored or granted
// is live until it is revoked or expires.
func (c *purposeCounts) live() int {
	return c.restored + int(c.granted) - int(c.revoked) - int(c.expired)
}

// counted returns the counts of purpose p, growing the service's counts,
// which are indexed by Purpose, to hold every purpose defined so far: they
// grow once per purpose at most, and never past MaxPurposes+1. Called
// with the lock held.
func (s *Service) counted(p Purpose) *purposeCounts {
	if int(p) < len(s.counts) {
		return &s.counts[p]
	}
	s.counts = append(s.counts, make([]purposeCounts, max(len(purposeNames()), int(p)+1)-len(s.counts))...)
	return &s.counts[p]
}

// countEnd counts a live lease of purpose p ended for reason. Called with
// the lock held.
func (s *Service) countEnd(p Purpose, reason EndReason) {
	c := s.counted(p)
	if reason == EndRevoked {
		c.revoked++
	} else {
		c.expired++
	}
}
