package lock

// WaitingCount returns how many AcquireWait calls wait for name on m, for tests
// that must know a waiter is queued before they free the lock.
func WaitingCount(m *Memory, name string) int {
	return m.locks.Queued(name)
}
