package lock

import (
	"context"
	"strconv"
	"time"

	"github.com/leasehold/lease"
)

// Bad input is reported as a *lease.Error with Code
// lease.CodeInvalidArgument and Field naming the argument, as the core
// service does, so callers match one sentinel whichever layer refused.

// CheckAcquire returns the error a Provider's Acquire must return for bad
// arguments, or nil. Providers call it first so that every provider refuses
// the same input with the same error.
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

// CheckRenew returns the error a Provider's Renew must return for bad
// arguments, or nil.
func CheckRenew(ctx context.Context, leases []Lease, d time.Duration) error {
	if d <= 0 {
		return invalid("renew", "d", d.String()+" is not positive")
	}
	return checkLeases("renew", ctx, leases)
}

// CheckRelease returns the error a Provider's Release must return for bad
// arguments, or nil.
func CheckRelease(ctx context.Context, leases []Lease) error {
	return checkLeases("release", ctx, leases)
}

// CheckHolder returns the error an Inspector's Holder must return for bad
// arguments, or nil.
func CheckHolder(ctx context.Context, name string) error {
	switch {
	case ctx == nil:
		return invalid("holder", "ctx", "must not be nil")
	case name == "":
		return invalid("holder", "name", "must not be empty")
	}
	return nil
}

// CheckHeld returns the error an Inspector's Held must return for bad
// arguments, or nil.
func CheckHeld(ctx context.Context, limit int) error {
	switch {
	case ctx == nil:
		return invalid("held", "ctx", "must not be nil")
	case limit < 0:
		return invalid("held", "limit", strconv.Itoa(limit)+" is negative")
	}
	return nil
}

func checkLeases(op string, ctx context.Context, leases []Lease) error {
	if ctx == nil {
		return invalid(op, "ctx", "must not be nil")
	}
	for i, l := range leases {
		switch {
		case l.Name == "":
			return invalid(op, "leases["+strconv.Itoa(i)+"].Name", "must not be empty")
		case l.ExecutionID == "":
			return invalid(op, "leases["+strconv.Itoa(i)+"].ExecutionID", "must not be empty")
		}
	}
	return nil
}

func invalid(op, field, detail string) *lease.Error {
	return &lease.Error{Package: "lock", Code: lease.CodeInvalidArgument, Op: op, Field: field, Detail: detail}
}
