package lockprovider

import "time"

// PollInterval is how often a lock.Manager over a provider that is not a
// Waiter tries again to acquire a held lock (Manager.Lock, DoWait), and
// the default poll of lock/election: a tenth of the lease duration d, at
// least 10 ms. A provider that waits but must poll as well (for a wake-up
// it may miss) can use it for the same bound.
func PollInterval(d time.Duration) time.Duration {
	return max(d/10, 10*time.Millisecond)
}
