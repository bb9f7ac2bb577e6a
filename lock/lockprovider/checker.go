package lockprovider

import (
	"context"
	"time"

	"github.com/leasehold/lease/internal/inputcheck"
	"github.com/leasehold/lease/internal/lockkit"
	"github.com/leasehold/lease/lock"
)

// Checker applies the contract's checks (CheckAcquire, CheckRenew, ...) and
// then a provider's own limits on names and text: the longest name or
// execution ID a column holds, text that must be valid UTF-8. Its zero
// limits are none. The contract's errors start with "lock:"; those of the
// limits with the provider's Package. A Checker is a plain value, safe to
// copy and to use from several goroutines.
type Checker struct {
	// Package names the provider's package ("postgres"): the Package of the
	// errors of its limits, which their messages start with.
	Package string
	// MaxNameLen is the longest lock name or execution ID the provider
	// holds, in bytes; 0 is no limit.
	MaxNameLen int
	// TextOnly refuses a name, execution ID or prefix that is not valid
	// UTF-8 or holds a NUL byte: what a text column cannot keep as given.
	TextOnly bool
}

func (c Checker) kit() lockkit.Checker {
	return lockkit.Checker{Names: inputcheck.Names{Package: c.Package, MaxNameLen: c.MaxNameLen, TextOnly: c.TextOnly}}
}

// Acquire checks the arguments of Acquire (AcquireWait, AcquireValue):
// CheckAcquire, then name and executionID against c's limits.
func (c Checker) Acquire(ctx context.Context, name, executionID string, d time.Duration) error {
	return c.kit().Acquire(ctx, name, executionID, d)
}

// Renew checks the arguments of Renew: CheckRenew, then each lease's name
// and execution ID against c's limits ("leases[i].Name").
func (c Checker) Renew(ctx context.Context, leases []lock.Lease, d time.Duration) error {
	return c.kit().Renew(ctx, len(leases), leasesAt(leases), d)
}

// Release checks the arguments of Release as Renew does.
func (c Checker) Release(ctx context.Context, leases []lock.Lease) error {
	return c.kit().Release(ctx, len(leases), leasesAt(leases))
}

// Holder checks the arguments of an Inspector's Holder: CheckHolder, then
// the name against c's limits.
func (c Checker) Holder(ctx context.Context, name string) error {
	return c.kit().Holder(ctx, name)
}

// Held checks the arguments of an Inspector's Held: CheckHeld, then the
// prefix as text.
func (c Checker) Held(ctx context.Context, prefix string, limit int) error {
	return c.kit().Held(ctx, prefix, limit)
}

// Name refuses s, the value of field in op, when it is empty, longer than
// c.MaxNameLen, or not text (when c.TextOnly): for the names a provider
// takes in calls of its own.
func (c Checker) Name(op, field, s string) error {
	return c.kit().Name(op, field, s)
}
