// Package lockkit holds the argument checks of the lock.Provider contract
// and the poll interval of a Manager, for package lock (its Memory and
// Manager) and for package lock/lockprovider, which exports them to
// provider authors. They live here because lock/lockprovider imports lock:
// lock cannot import it back.
package lockkit

import (
	"context"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/inputcheck"
)

// LeaseAt returns the name and execution ID of the i-th lease of a batch,
// so that the checks need not know lock.Lease.
type LeaseAt func(i int) (name, executionID string)

// CheckAcquire checks the arguments of Acquire.
func CheckAcquire(ctx context.Context, name, executionID string, d time.Duration) error {
	switch {
	case ctx == nil:
		return invalid("acquire", "ctx", "must not be nil")
	case name == "":
		return invalid("acquire", "name", "must not be empty")
	case executionID == "":
		return invalid("acquire", "executionID", "must not be empty")
	case d <= 0:
		return invalid("acquire", "d", d.String()+" is not positive")
	}
	return nil
}

// CheckRenew checks the arguments of Renew: n leases, read with at.
func CheckRenew(ctx context.Context, n int, at LeaseAt, d time.Duration) error {
	if d <= 0 {
		return invalid("renew", "d", d.String()+" is not positive")
	}
	return checkLeases("renew", ctx, n, at)
}

// CheckRelease checks the arguments of Release.
func CheckRelease(ctx context.Context, n int, at LeaseAt) error {
	return checkLeases("release", ctx, n, at)
}

// CheckHolder checks the arguments of an Inspector's Holder.
func CheckHolder(ctx context.Context, name string) error {
	switch {
	case ctx == nil:
		return invalid("holder", "ctx", "must not be nil")
	case name == "":
		return invalid("holder", "name", "must not be empty")
	}
	return nil
}

// CheckHeld checks the arguments of an Inspector's Held.
func CheckHeld(ctx context.Context, limit int) error {
	switch {
	case ctx == nil:
		return invalid("held", "ctx", "must not be nil")
	case limit < 0:
		return invalid("held", "limit", strconv.Itoa(limit)+" is negative")
	}
	return nil
}

// CheckValue checks a value to attach to a holding, at most maxSize
// (lock.MaxValueSize) bytes.
func CheckValue(value []byte, maxSize int) error {
	if len(value) > maxSize {
		return invalid("acquire", "value", strconv.Itoa(len(value))+" bytes is more than MaxValueSize ("+strconv.Itoa(maxSize)+")")
	}
	return nil
}

// PollInterval is how often a Manager over a provider that is not a Waiter
// tries again to acquire a held lock: a tenth of the lease duration d, at
// least 10 ms.
func PollInterval(d time.Duration) time.Duration {
	return max(d/10, 10*time.Millisecond)
}

func checkLeases(op string, ctx context.Context, n int, at LeaseAt) error {
	if ctx == nil {
		return invalid(op, "ctx", "must not be nil")
	}
	for i := range n {
		name, executionID := at(i)
		switch {
		case name == "":
			return invalid(op, "leases["+strconv.Itoa(i)+"].Name", "must not be empty")
		case executionID == "":
			return invalid(op, "leases["+strconv.Itoa(i)+"].ExecutionID", "must not be empty")
		}
	}
	return nil
}

// invalid reports bad input as package lock does: the checks are the lock
// contract's, whichever provider runs them.
func invalid(op, field, detail string) *lease.Error {
	return &lease.Error{Package: "lock", Code: lease.CodeInvalidArgument, Op: op, Field: field, Detail: detail}
}

// Checker applies the contract's checks, then a provider's own limits on
// names and text under its package's name.
type Checker struct {
	inputcheck.Names
}

// Acquire checks the arguments of Acquire.
func (c Checker) Acquire(ctx context.Context, name, executionID string, d time.Duration) error {
	if err := CheckAcquire(ctx, name, executionID, d); err != nil {
		return err
	}
	if err := c.Name("acquire", "name", name); err != nil {
		return err
	}
	return c.Name("acquire", "executionID", executionID)
}

// Renew checks the arguments of Renew.
func (c Checker) Renew(ctx context.Context, n int, at LeaseAt, d time.Duration) error {
	if err := CheckRenew(ctx, n, at, d); err != nil {
		return err
	}
	return c.leases("renew", n, at)
}

// Release checks the arguments of Release.
func (c Checker) Release(ctx context.Context, n int, at LeaseAt) error {
	if err := CheckRelease(ctx, n, at); err != nil {
		return err
	}
	return c.leases("release", n, at)
}

// Holder checks the arguments of Holder.
func (c Checker) Holder(ctx context.Context, name string) error {
	if err := CheckHolder(ctx, name); err != nil {
		return err
	}
	return c.Name("holder", "name", name)
}

// Held checks the arguments of Held.
func (c Checker) Held(ctx context.Context, prefix string, limit int) error {
	if err := CheckHeld(ctx, limit); err != nil {
		return err
	}
	return c.Text("held", "prefix", prefix)
}

func (c Checker) leases(op string, n int, at LeaseAt) error {
	for i := range n {
		name, executionID := at(i)
		if err := c.Name(op, "leases["+strconv.Itoa(i)+"].Name", name); err != nil {
			return err
		}
		if err := c.Name(op, "leases["+strconv.Itoa(i)+"].ExecutionID", executionID); err != nil {
			return err
		}
	}
	return nil
}
