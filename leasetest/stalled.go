package leasetest

import (
	"time"

	"github.com/leasehold/lease"
)

// Stalled returns a view of c whose timers never fire. It reads c's time,
// and c's Advance and Set move it, but nothing scheduled through the view
// ever runs. A service on it learns of expiries only when a call settles
// them, like a service whose timer goroutine is running late: use it to
// check that what callers observe never depends on timers having fired.
func Stalled(c *FakeClock) lease.Clock { return stalled{c} }

type stalled struct{ c *FakeClock }

func (s stalled) Now() time.Time { return s.c.Now() }

func (stalled) AfterFunc(time.Duration, func()) lease.Timer { return neverTimer{} }

type neverTimer struct{}

func (neverTimer) Stop() bool { return true }
