package otel

// LeaseCountsLocked reports whether the Lease observer's registry of
// services is locked: a test checks that a service's hooks, run by a
// collection, do not run under it.
func (t *Telemetry) LeaseCountsLocked() bool {
	if t.lease.mu.TryLock() {
		t.lease.mu.Unlock()
		return false
	}
	return true
}
