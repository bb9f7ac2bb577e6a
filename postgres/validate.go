package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// MaxNameLen is the longest lock name or execution ID, in bytes, that the
// provider accepts. It keeps every key well inside what a PostgreSQL B-tree
// index entry can hold.
const MaxNameLen = 1024

// maxIdentifierLen is PostgreSQL's NAMEDATALEN-1: longer identifiers are
// silently truncated, which could make two tables one.
const maxIdentifierLen = 63

func invalid(op, field, detail string) error {
	return &lease.Error{Package: "postgres", Code: lease.CodeInvalidArgument, Op: op, Field: field, Detail: detail}
}

func checkIdentifier(field, s string) error {
	switch {
	case s == "":
		return invalid("new", field, "must not be empty")
	case len(s) > maxIdentifierLen:
		return invalid("new", field, fmt.Sprintf("%q is %d bytes, more than PostgreSQL's %d", s, len(s), maxIdentifierLen))
	}
	return checkText("new", field, s)
}

// checkText rejects what a PostgreSQL text value cannot hold.
func checkText(op, field, s string) error {
	switch {
	case !utf8.ValidString(s):
		return invalid(op, field, fmt.Sprintf("%q is not valid UTF-8", s))
	case strings.IndexByte(s, 0) >= 0:
		return invalid(op, field, fmt.Sprintf("%q contains a NUL byte", s))
	}
	return nil
}

func checkName(op, field, s string) error {
	switch {
	case s == "":
		return invalid(op, field, "must not be empty")
	case len(s) > MaxNameLen:
		return invalid(op, field, fmt.Sprintf("is %d bytes, more than %d", len(s), MaxNameLen))
	}
	return checkText(op, field, s)
}

// checkAcquire applies the contract's checks (lockprovider.CheckAcquire) and then
// what a text column and its index can hold.
func checkAcquire(ctx context.Context, name, executionID string, d time.Duration) error {
	if err := lockprovider.CheckAcquire(ctx, name, executionID, d); err != nil {
		return err
	}
	if err := checkName("acquire", "name", name); err != nil {
		return err
	}
	return checkName("acquire", "executionID", executionID)
}

// checkLeases is checkAcquire for the leases of a batch, so that a bad
// entry is refused before anything is sent.
func checkLeases(op string, leases []lock.Lease) error {
	for i, l := range leases {
		if err := checkName(op, fmt.Sprintf("leases[%d].Name", i), l.Name); err != nil {
			return err
		}
		if err := checkName(op, fmt.Sprintf("leases[%d].ExecutionID", i), l.ExecutionID); err != nil {
			return err
		}
	}
	return nil
}
