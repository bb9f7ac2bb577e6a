package keylock

import "time"

// leaseFields is the underlying type of Lease and of lock.Lease.
type leaseFields = struct {
	Name        string
	ExecutionID string
	ExpiresAt   time.Time
	Token       uint64
}

// ToLeases converts the callers' leases (lock.Lease) to the Locks'.
func ToLeases[T ~leaseFields](in []T) []Lease {
	out := make([]Lease, len(in))
	for i, l := range in {
		out[i] = Lease(l)
	}
	return out
}

// FromLeases converts the Locks' leases to the callers'; nil stays nil.
func FromLeases[T ~leaseFields](in []Lease) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i, l := range in {
		out[i] = T(l)
	}
	return out
}
