package lease

import (
	"strconv"
	"time"
)

// ID identifies a lease. A Service issues IDs in increasing order starting at
// 1 and never reuses one. The zero ID means "no lease".
type ID uint64

// Lease is a snapshot of a lease. It is a plain value: changing it changes
// nothing in the Service it came from.
type Lease struct {
	ID        ID
	Holder    string
	Purpose   Purpose
	TTL       time.Duration
	GrantedAt time.Time
	RenewedAt time.Time // equals GrantedAt until the first renewal
	ExpiresAt time.Time
	// Revision is the service revision at which the lease was granted.
	// Revisions only grow, so it also orders grants.
	Revision int64
	// Keys are the keys attached to the lease, sorted. For Revoke and for
	// ending notifications they are the keys that were deleted.
	Keys []string
}

// Remaining returns how long the lease has left at now, or 0 once it has
// expired.
func (l Lease) Remaining(now time.Time) time.Duration {
	if d := l.ExpiresAt.Sub(now); d > 0 {
		return d
	}
	return 0
}

// EndReason tells why a lease ended.
type EndReason uint8

const (
	// EndExpired means the lease reached its ExpiresAt without renewal.
	EndExpired EndReason = iota + 1
	// EndRevoked means the lease was revoked.
	EndRevoked
)

// String returns "expired" or "revoked".
func (r EndReason) String() string {
	switch r {
	case EndExpired:
		return "expired"
	case EndRevoked:
		return "revoked"
	}
	return "EndReason(" + strconv.Itoa(int(r)) + ")"
}

// KeyValue is one key of the service's key space, as returned by Scan.
type KeyValue struct {
	Key     string
	Value   []byte
	LeaseID ID // 0 when the key is not attached to a lease
}
