// Package timebase gives a service one reading of time that never runs
// backwards, shared by everything built on it.
//
// A wall clock can step back (an NTP step, a restored VM). If each component
// kept its own "latest time seen", two of them could disagree by the size of
// the step, and one could decide that a claim has expired while the service
// that granted it still holds it live. So there is one Base per service: every
// reader moves the same high-water mark, a step back reads as time standing
// still until the clock catches up, and a step forward is honoured.
package timebase

import (
	"sync/atomic"
	"time"
)

// Base is a never-decreasing reading of a clock, kept as nanoseconds since an
// epoch so that comparisons are integer compares. It is safe for concurrent
// use.
type Base struct {
	epoch time.Time
	read  func() time.Time // nil: the monotonic clock, through time.Since
	last  atomic.Int64
}

// New returns a Base reading read, with its epoch at read's current time. A
// nil read means the system's monotonic clock, which cannot step back at all
// and is read twice as fast as time.Now.
func New(read func() time.Time) *Base {
	b := &Base{read: read}
	if read == nil {
		b.epoch = time.Now()
	} else {
		b.epoch = read()
	}
	return b
}

// Now returns the current time in nanoseconds since the epoch: the clock's
// reading, or the highest reading any caller has seen if that is later.
func (b *Base) Now() int64 {
	if b.read == nil {
		// The monotonic clock never runs backwards, for any reader on any
		// CPU: no high-water mark to keep, and no atomic on the hot path.
		return int64(time.Since(b.epoch))
	}
	n := int64(b.read().Sub(b.epoch))
	for {
		last := b.last.Load()
		if n <= last {
			return last
		}
		if b.last.CompareAndSwap(last, n) {
			return n
		}
	}
}

// Time converts nanoseconds since the epoch to a time.Time. Times made by
// Time convert back exactly with Nanos.
func (b *Base) Time(n int64) time.Time { return b.epoch.Add(time.Duration(n)) }

// Nanos converts t to nanoseconds since the epoch, saturating.
func (b *Base) Nanos(t time.Time) int64 { return int64(t.Sub(b.epoch)) }
