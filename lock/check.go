package lock

import "github.com/leasehold/lease"

// Bad input is reported as a *lease.Error with Code
// lease.CodeInvalidArgument and Field naming the argument, as the core
// service does, so callers match one sentinel whichever layer refused. The
// provider checks the arguments of its calls (package lockprovider's
// checks), once; the Manager checks only its own (options, a nil fn).

func invalid(op, field, detail string) *lease.Error {
	return &lease.Error{Package: "lock", Code: lease.CodeInvalidArgument, Op: op, Field: field, Detail: detail}
}
