package lease

import (
	"errors"
	"strconv"
	"strings"
)

// Code is a stable, machine-readable error code. Codes never change meaning;
// log and match them freely.
type Code string

// The error codes of this package. Other packages add their own
// (docs/errors.md lists them all).
const (
	CodeExpired         Code = "LS_EXPIRED"          // the lease passed its TTL
	CodeStaleUse        Code = "LS_STALE_USE"        // Use of an expired or revoked lease
	CodeAlreadyRevoked  Code = "LS_ALREADY_REVOKED"  // the lease was revoked
	CodePurposeMismatch Code = "LS_PURPOSE_MISMATCH" // the lease was granted for another purpose
	CodeNotFound        Code = "LS_NOT_FOUND"        // no lease with that ID was ever issued
	CodeInvalidArgument Code = "LS_INVALID_ARGUMENT" // bad input; nothing changed
	CodeClosed          Code = "LS_CLOSED"           // the service is closed
	CodeKeyExists       Code = "LS_KEY_EXISTS"       // GrantWithKey found the key present
	// CodeStorage reports storage that cannot serve the call: a file that
	// is read-only, full, corrupt or not a database. Nothing was changed.
	CodeStorage Code = "LS_STORAGE"
)

// Sentinel errors, one per code, for errors.Is. Every error the service
// returns for a lease condition is an [*Error] that matches the sentinel of
// its code; an error about a lease that has ended also matches ErrStaleUse
// and the sentinel of how it ended (see [Error]).
var (
	ErrExpired         = errors.New("lease expired")
	ErrStaleUse        = errors.New("stale lease use")
	ErrAlreadyRevoked  = errors.New("lease already revoked")
	ErrPurposeMismatch = errors.New("lease purpose mismatch")
	ErrNotFound        = errors.New("lease not found")
	ErrInvalidArgument = errors.New("invalid argument")
	ErrClosed          = errors.New("lease service closed")
	ErrKeyExists       = errors.New("key exists")
	ErrStorage         = errors.New("storage failure")
)

func sentinel(c Code) error {
	switch c {
	case CodeExpired:
		return ErrExpired
	case CodeStaleUse:
		return ErrStaleUse
	case CodeAlreadyRevoked:
		return ErrAlreadyRevoked
	case CodePurposeMismatch:
		return ErrPurposeMismatch
	case CodeNotFound:
		return ErrNotFound
	case CodeInvalidArgument:
		return ErrInvalidArgument
	case CodeClosed:
		return ErrClosed
	case CodeKeyExists:
		return ErrKeyExists
	case CodeStorage:
		return ErrStorage
	}
	return nil
}

// Error describes a failed operation. It is the one error type of this
// module and of the modules built on it: every error they return is an
// *Error, wraps one, or is a documented context error (docs/errors.md).
//
// An Error unwraps to the sentinel of its Code, so errors.Is(err,
// ErrExpired) and errors.As(err, &e) both work. One more rule covers a
// lease that has ended, whichever call noticed it: such an error matches
// ErrStaleUse ("you no longer hold it"), and also ErrExpired or
// ErrAlreadyRevoked for the way it ended (Ended), whatever its Code.
//
// Packages other than this one set Package, and may set Err to a sentinel
// of their own that the error also matches. An *Error held in a sentinel
// variable (lock.ErrLockLost, ...) is shared: treat every *Error as
// read-only.
type Error struct {
	Code Code
	// Package names the package that raised the error: "lock", "claim",
	// "postgres", ...; "" is this package. Error starts with it.
	Package string
	Op      string // the operation: "grant", "renew", "use", ...
	LeaseID ID     // the lease concerned, 0 when none
	// Ended is how the lease concerned ended, when the error is about a
	// lease that has ended (codes LS_EXPIRED, LS_ALREADY_REVOKED,
	// LS_STALE_USE); 0 when not known.
	Ended EndReason
	// Field names the offending argument when Code is CodeInvalidArgument.
	Field string
	// Expected and Actual are set when Code is CodePurposeMismatch: the
	// purpose Use asked for and the purpose the lease was granted with.
	Expected, Actual Purpose
	// Key is the key concerned, for key operations.
	Key string
	// Detail says more, in words; it is not stable.
	Detail string
	// Err, when set, is a sentinel of the raising package that the error
	// also matches with errors.Is (claim.ErrClaimLost, ...).
	Err error
}

// Error formats as "PACKAGE: OP lease ID: message [CODE]", PACKAGE being
// "lease" for this package.
func (e *Error) Error() string {
	var b strings.Builder
	pkg := e.Package
	if pkg == "" {
		pkg = "lease"
	}
	b.WriteString(pkg)
	b.WriteString(": ")
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteByte(' ')
	}
	if e.LeaseID != 0 {
		b.WriteString("lease ")
		b.WriteString(strconv.FormatUint(uint64(e.LeaseID), 10))
		b.WriteByte(' ')
	}
	if e.Key != "" {
		b.WriteString("key ")
		b.WriteString(strconv.Quote(e.Key))
		b.WriteByte(' ')
	}
	switch {
	case e.Field != "":
		b.WriteString(e.Field)
		b.WriteString(": ")
		b.WriteString(e.Detail)
	case e.Code == CodePurposeMismatch:
		b.WriteString("granted for ")
		b.WriteString(e.Actual.String())
		b.WriteString(", used for ")
		b.WriteString(e.Expected.String())
	default:
		// The code's words, else Err's unless Detail says it all.
		var what string
		if s := sentinel(e.Code); s != nil {
			what = s.Error()
		} else if inner, ok := e.Err.(*Error); ok && e.Detail == "" {
			what = inner.Detail
		} else if e.Err != nil && e.Detail == "" {
			what = strings.TrimPrefix(e.Err.Error(), pkg+": ")
		}
		b.WriteString(what)
		if e.Detail != "" {
			if what != "" {
				b.WriteString(": ")
			}
			b.WriteString(e.Detail)
		}
	}
	b.WriteString(" [")
	b.WriteString(string(e.Code))
	b.WriteByte(']')
	return b.String()
}

// Unwrap returns the sentinel error for e.Code.
func (e *Error) Unwrap() error { return sentinel(e.Code) }

// Is reports whether e matches target beyond its Code's sentinel: Err, and
// the ended-lease rule (see Error).
func (e *Error) Is(target error) bool {
	if target == nil {
		return false
	}
	if e.Err != nil && target == e.Err {
		return true
	}
	switch target {
	case ErrStaleUse:
		return e.ended()
	case ErrExpired:
		return e.Ended == EndExpired && e.ended()
	case ErrAlreadyRevoked:
		return e.Ended == EndRevoked && e.ended()
	}
	return false
}

// ended reports whether e is about a lease that has ended.
func (e *Error) ended() bool {
	switch e.Code {
	case CodeExpired, CodeAlreadyRevoked, CodeStaleUse:
		return true
	}
	return false
}

// CodeOf returns the Code of the first *Error in err's chain, or "" if there
// is none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func newError(code Code, op string, id ID) *Error {
	return &Error{Code: code, Op: op, LeaseID: id}
}

// endedError reports a call on lease id, which ended for reason, with code.
func endedError(code Code, op string, id ID, reason EndReason) *Error {
	return &Error{Code: code, Op: op, LeaseID: id, Ended: reason}
}

func invalidArgument(field, op string, id ID, detail string) *Error {
	return &Error{Code: CodeInvalidArgument, Op: op, LeaseID: id, Field: field, Detail: detail}
}
