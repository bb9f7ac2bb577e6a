package lockprovider

import (
	"context"
	"time"

	"github.com/leasehold/lease/internal/lockkit"
	"github.com/leasehold/lease/lock"
)

// CheckAcquire returns the error a Provider's Acquire (and a Waiter's
// AcquireWait, a ValueAcquirer's AcquireValue) must return for bad
// arguments, or nil: a nil ctx, an empty name or executionID, a d that is
// not positive.
func CheckAcquire(ctx context.Context, name, executionID string, d time.Duration) error {
	return lockkit.CheckAcquire(ctx, name, executionID, d)
}

// CheckRenew returns the error a Provider's Renew must return for bad
// arguments, or nil: a d that is not positive, a nil ctx, a lease without
// a name or execution ID (Field "leases[i].Name", "leases[i].ExecutionID").
func CheckRenew(ctx context.Context, leases []lock.Lease, d time.Duration) error {
	return lockkit.CheckRenew(ctx, len(leases), leasesAt(leases), d)
}

// CheckRelease returns the error a Provider's Release must return for bad
// arguments, or nil, as CheckRenew does without the duration.
func CheckRelease(ctx context.Context, leases []lock.Lease) error {
	return lockkit.CheckRelease(ctx, len(leases), leasesAt(leases))
}

// CheckHolder returns the error an Inspector's Holder must return for bad
// arguments, or nil: a nil ctx, an empty name.
func CheckHolder(ctx context.Context, name string) error {
	return lockkit.CheckHolder(ctx, name)
}

// CheckHeld returns the error an Inspector's Held must return for bad
// arguments, or nil: a nil ctx, a negative limit.
func CheckHeld(ctx context.Context, limit int) error {
	return lockkit.CheckHeld(ctx, limit)
}

// CheckValue returns the error a provider must return for a value that may
// not be attached to a holding (longer than lock.MaxValueSize), or nil.
func CheckValue(value []byte) error {
	return lockkit.CheckValue(value, lock.MaxValueSize)
}

func leasesAt(leases []lock.Lease) lockkit.LeaseAt {
	return func(i int) (string, string) { return leases[i].Name, leases[i].ExecutionID }
}
