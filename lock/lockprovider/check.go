package lockprovider

import (
	"context"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/textcol"
)

// The checks of the contract's arguments. Each returns a *lease.Error with
// code lease.CodeInvalidArgument whose message starts with "lock:" (the
// contract's refusal, whichever provider runs it) and whose Field names the
// argument, or nil. A provider calls the check of an operation first,
// before it does any work or sends anything: it is the one place the input
// is checked.

// CheckAcquire returns the error a Provider's Acquire (and a Waiter's
// AcquireWait, a ValueAcquirer's AcquireValue) must return for bad
// arguments, or nil: a nil ctx, an empty name or executionID, a d that is
// not positive.
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
// arguments, or nil: a d that is not positive, a nil ctx, a lease without
// a name or execution ID (Field "leases[i].Name", "leases[i].ExecutionID").
func CheckRenew(ctx context.Context, leases []Lease, d time.Duration) error {
	if d <= 0 {
		return invalid("renew", "d", d.String()+" is not positive")
	}
	return checkLeases("renew", ctx, leases)
}

// CheckRelease returns the error a Provider's Release must return for bad
// arguments, or nil, as CheckRenew does without the duration.
func CheckRelease(ctx context.Context, leases []Lease) error {
	return checkLeases("release", ctx, leases)
}

// CheckHolder returns the error an Inspector's Holder must return for bad
// arguments, or nil: a nil ctx, an empty name.
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
// arguments, or nil: a nil ctx, a negative limit.
func CheckHeld(ctx context.Context, limit int) error {
	switch {
	case ctx == nil:
		return invalid("held", "ctx", "must not be nil")
	case limit < 0:
		return invalid("held", "limit", strconv.Itoa(limit)+" is negative")
	}
	return nil
}

// CheckWaiting returns the error a WaitInspector's Waiting must return for
// bad arguments, or nil: a nil ctx, an empty name, a negative limit.
func CheckWaiting(ctx context.Context, name string, limit int) error {
	switch {
	case ctx == nil:
		return invalid("waiting", "ctx", "must not be nil")
	case name == "":
		return invalid("waiting", "name", "must not be empty")
	case limit < 0:
		return invalid("waiting", "limit", strconv.Itoa(limit)+" is negative")
	}
	return nil
}

// CheckValue returns the error a provider must return for a value that may
// not be attached to a holding (longer than MaxValueSize), or nil.
func CheckValue(value []byte) error {
	if len(value) > MaxValueSize {
		return invalid("acquire", "value", strconv.Itoa(len(value))+" bytes is more than MaxValueSize ("+strconv.Itoa(MaxValueSize)+")")
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

// invalid reports bad input as package lock does: the checks are the lock
// contract's, whichever provider runs them.
func invalid(op, field, detail string) *lease.Error {
	return &lease.Error{Package: "lock", Code: lease.CodeInvalidArgument, Op: op, Field: field, Detail: detail}
}

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

// Acquire checks the arguments of Acquire (AcquireWait, AcquireValue):
// CheckAcquire, then name and executionID against c's limits.
func (c Checker) Acquire(ctx context.Context, name, executionID string, d time.Duration) error {
	if err := CheckAcquire(ctx, name, executionID, d); err != nil {
		return err
	}
	if err := c.Name("acquire", "name", name); err != nil {
		return err
	}
	return c.Name("acquire", "executionID", executionID)
}

// Renew checks the arguments of Renew: CheckRenew, then each lease's name
// and execution ID against c's limits ("leases[i].Name").
func (c Checker) Renew(ctx context.Context, leases []Lease, d time.Duration) error {
	if err := CheckRenew(ctx, leases, d); err != nil {
		return err
	}
	return c.leases("renew", leases)
}

// Release checks the arguments of Release as Renew does.
func (c Checker) Release(ctx context.Context, leases []Lease) error {
	if err := CheckRelease(ctx, leases); err != nil {
		return err
	}
	return c.leases("release", leases)
}

// Holder checks the arguments of an Inspector's Holder: CheckHolder, then
// the name against c's limits.
func (c Checker) Holder(ctx context.Context, name string) error {
	if err := CheckHolder(ctx, name); err != nil {
		return err
	}
	return c.Name("holder", "name", name)
}

// Held checks the arguments of an Inspector's Held: CheckHeld, then the
// prefix as text.
func (c Checker) Held(ctx context.Context, prefix string, limit int) error {
	if err := CheckHeld(ctx, limit); err != nil {
		return err
	}
	return c.text("held", "prefix", prefix)
}

// Waiting checks the arguments of a WaitInspector's Waiting: CheckWaiting,
// then the name against c's limits.
func (c Checker) Waiting(ctx context.Context, name string, limit int) error {
	if err := CheckWaiting(ctx, name, limit); err != nil {
		return err
	}
	return c.Name("waiting", "name", name)
}

// Name refuses s, the value of field in op, when it is empty, longer than
// c.MaxNameLen, or not text (when c.TextOnly): for the names a provider
// takes in calls of its own.
func (c Checker) Name(op, field, s string) error {
	if why := textcol.Name(s, c.MaxNameLen, c.TextOnly); why != "" {
		return c.invalid(op, field, why)
	}
	return nil
}

// text refuses, when c.TextOnly, a string that is not valid UTF-8 or holds
// a NUL byte.
func (c Checker) text(op, field, s string) error {
	if !c.TextOnly {
		return nil
	}
	if why := textcol.Text(s); why != "" {
		return c.invalid(op, field, why)
	}
	return nil
}

func (c Checker) invalid(op, field, detail string) error {
	return &lease.Error{Package: c.Package, Code: lease.CodeInvalidArgument, Op: op, Field: field, Detail: detail}
}

func (c Checker) leases(op string, leases []Lease) error {
	for i, l := range leases {
		if err := c.Name(op, "leases["+strconv.Itoa(i)+"].Name", l.Name); err != nil {
			return err
		}
		if err := c.Name(op, "leases["+strconv.Itoa(i)+"].ExecutionID", l.ExecutionID); err != nil {
			return err
		}
	}
	return nil
}
