package claim

import "time"

// The Broker keeps times as nanoseconds since its epoch, like the service:
// comparisons in its heaps are then integer compares, and a time taken from
// a lease (ExpiresAt) converts exactly.

// now reads the clock, never going backwards. b.mu is held.
func (b *Broker) now() int64 {
	n := b.nanos(b.clock.Now())
	if n < b.last {
		return b.last
	}
	b.last = n
	return n
}

// nanos converts t to nanoseconds since the epoch, saturating.
func (b *Broker) nanos(t time.Time) int64 { return int64(t.Sub(b.epoch)) }

// at converts nanoseconds since the epoch back to a time.
func (b *Broker) at(n int64) time.Time { return b.epoch.Add(time.Duration(n)) }

// addSat adds without overflowing, for delays near the maximum duration.
func addSat(a int64, d time.Duration) int64 {
	if c := a + int64(d); c >= a {
		return c
	}
	return 1<<63 - 1
}
