package claim

import "time"

// The Memory reads time only from its service's Clock, the service's one
// time base, and arms its timers (the delayed-item timer and Work's
// heartbeats) on it too. That base never runs backwards: when the wall clock
// steps back (an NTP correction, a restored virtual machine), time stands
// still for the service and for the Memory alike until the clock catches
// up, so the Memory never judges a claim expired that the service holds
// live. The Memory keeps no reading of its own.
//
// Times are kept as nanoseconds since the Memory's epoch, an instant of that
// base: comparisons in its heaps are then integer compares, and a time taken
// from a lease (ExpiresAt) converts exactly.

// now reads the service's time base.
func (m *Memory) now() int64 { return m.nanos(m.clock.Now()) }

// nanos converts t to nanoseconds since the epoch, saturating.
func (m *Memory) nanos(t time.Time) int64 { return int64(t.Sub(m.epoch)) }

// at converts nanoseconds since the epoch back to a time.
func (m *Memory) at(n int64) time.Time { return m.epoch.Add(time.Duration(n)) }

// addSat adds without overflowing, for delays near the maximum duration.
func addSat(a int64, d time.Duration) int64 {
	if c := a + int64(d); c >= a {
		return c
	}
	return 1<<63 - 1
}
