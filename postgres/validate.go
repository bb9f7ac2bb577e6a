package postgres

import (
	"fmt"
	"math"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim/claimstore"
	"github.com/leasehold/lease/lock/lockprovider"
)

// MaxNameLen is the longest lock name or execution ID, in bytes, that the
// provider accepts. It keeps every key well inside what a PostgreSQL B-tree
// index entry can hold.
const MaxNameLen = 1024

// maxIdentifierLen is PostgreSQL's NAMEDATALEN-1: longer identifiers are
// silently truncated, which could make two tables one.
const maxIdentifierLen = 63

// checks applies package claim's rules and this package's limits: names of
// at most MaxNameLen bytes, text a PostgreSQL text value holds, attempts in
// an integer column and IDs in a bigint one.
var checks = claimstore.Checker{Package: "postgres", MaxNameLen: MaxNameLen, TextOnly: true,
	MaxAttempts: math.MaxInt32, MaxID: math.MaxInt64}

// lockChecks applies the lock contract's checks and the same limits to
// lock names and execution IDs.
var lockChecks = lockprovider.Checker{Package: "postgres", MaxNameLen: MaxNameLen, TextOnly: true}

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
	return checks.Text("new", field, s)
}
