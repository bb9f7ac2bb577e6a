package lease

import "time"

// Clock is the source of time for a Service. Implementations must be safe for
// concurrent use. leasetest.FakeClock is one for tests.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f once, on its own goroutine or synchronously from
	// whatever advances the clock, after d has elapsed. It must never call f
	// from within AfterFunc itself.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started; it reports whether it
	// did so.
	Stop() bool
}

// SystemClock returns the Clock of the time package: time.Now and
// time.AfterFunc.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
