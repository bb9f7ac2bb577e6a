package lease

import (
	"errors"
	"strconv"
	"strings"
)

// Code is a stable, machine-readable error code. Codes never change meaning;
// log and match them freely.
type Code string

// The error codes. The first four come from the Generic Lease Service spec.
const (
	CodeExpired         Code = "LS_EXPIRED"          // the lease passed its TTL
	CodeStaleUse        Code = "LS_STALE_USE"        // use of an expired or revoked lease
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
// returns for a lease condition is an [*Error] that matches exactly one of
// these.
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

// Error describes a failed operation. It unwraps to the sentinel of its Code,
// so errors.Is(err, ErrExpired) and errors.As(err, &e) both work.
type Error struct {
	Code    Code
	Op      string // the operation: "grant", "renew", "use", ...
	LeaseID ID     // the lease concerned, 0 when none
	// Field names the offending argument when Code is CodeInvalidArgument.
	Field string
	// Expected and Actual are set when Code is CodePurposeMismatch: the
	// purpose Use asked for and the purpose the lease was granted with.
	Expected, Actual Purpose
	// Key is the key concerned, for key operations.
	Key string
	// Detail says more, in words; it is not stable.
	Detail string
}

// Error formats as "lease: OP lease ID: message [CODE]".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("lease: ")
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
		if s := sentinel(e.Code); s != nil {
			b.WriteString(s.Error())
		}
		if e.Detail != "" {
			b.WriteString(": ")
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

func invalidArgument(field, op string, id ID, detail string) *Error {
	return &Error{Code: CodeInvalidArgument, Op: op, LeaseID: id, Field: field, Detail: detail}
}
