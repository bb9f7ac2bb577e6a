package lock

import (
	"context"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/lockkit"
)

// Bad input is reported as a *lease.Error with Code
// lease.CodeInvalidArgument and Field naming the argument, as the core
// service does, so callers match one sentinel whichever layer refused. The
// checks of the Provider contract are in internal/lockkit, which package
// lock/lockprovider exports to provider authors.

func checkRenew(ctx context.Context, leases []Lease, d time.Duration) error {
	return lockkit.CheckRenew(ctx, len(leases), leasesAt(leases), d)
}

func checkRelease(ctx context.Context, leases []Lease) error {
	return lockkit.CheckRelease(ctx, len(leases), leasesAt(leases))
}

func leasesAt(leases []Lease) lockkit.LeaseAt {
	return func(i int) (string, string) { return leases[i].Name, leases[i].ExecutionID }
}

func invalid(op, field, detail string) *lease.Error {
	return &lease.Error{Package: "lock", Code: lease.CodeInvalidArgument, Op: op, Field: field, Detail: detail}
}
