package lockprovider

import (
	"time"

	"github.com/leasehold/lease/internal/lockkit"
)

// PollInterval is how often a lock.Manager over a provider that is not a
// lock.Waiter tries again to acquire a held lock (Manager.Lock, DoWait), and
// the default poll of lock/election: a tenth of the lease duration d, at
// least 10 ms. A provider that waits but must poll as well (for a wake-up
// it may miss) can use it for the same bound.
func PollInterval(d time.Duration) time.Duration {
	return lockkit.PollInterval(d)
}
