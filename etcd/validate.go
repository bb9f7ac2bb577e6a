package etcd

import (
	"context"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

func invalid(op, field, detail string) error {
	return &lease.Error{Package: "etcd", Code: lease.CodeInvalidArgument, Op: op, Field: field, Detail: detail}
}

// checkDuration refuses a duration longer than etcd grants.
func checkDuration(op string, d time.Duration) error {
	if d > MaxDuration {
		return invalid(op, "d", d.String()+" is longer than etcd's largest lease TTL, "+MaxDuration.String())
	}
	return nil
}

// checkAcquire applies the contract's checks of an acquisition and of its
// value, then etcd's limit on TTLs.
func checkAcquire(ctx context.Context, name, executionID string, d time.Duration, value []byte) error {
	if err := lockprovider.CheckAcquire(ctx, name, executionID, d); err != nil {
		return err
	}
	if err := lockprovider.CheckValue(value); err != nil {
		return err
	}
	return checkDuration("acquire", d)
}

// checkRenew applies the contract's checks, then etcd's limit on TTLs.
func checkRenew(ctx context.Context, leases []lock.Lease, d time.Duration) error {
	if err := lockprovider.CheckRenew(ctx, leases, d); err != nil {
		return err
	}
	return checkDuration("renew", d)
}
