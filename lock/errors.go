package lock

import (
	"strconv"

	"github.com/leasehold/lease"
)

// The codes of this package's errors, beside those of package lease
// (lease.CodeInvalidArgument for bad input, lease.CodeClosed after Close).
// Codes never change meaning.
const (
	// CodeLockLost: the lock was lost while its holder ran, or was about to
	// expire without a confirmed renewal.
	CodeLockLost lease.Code = "LS_LOCK_LOST"
	// CodeStaleToken: a Fence refused a fencing token older than one it
	// has seen.
	CodeStaleToken lease.Code = "LS_STALE_TOKEN"
	// CodeProviderFault: the provider broke its contract (a Renew that
	// panicked, an AcquireWait that returned neither a lease nor an error).
	CodeProviderFault lease.Code = "LS_PROVIDER_FAULT"
)

// ErrLockLost is the cause (see context.Cause) with which a Manager cancels
// the context of a function whose lock is lost, or about to expire without a
// confirmed renewal. Do and TryLock also return it when the lock was lost
// while the function ran. It is a *lease.Error with CodeLockLost; treat it
// as read-only.
var ErrLockLost error = &lease.Error{Package: "lock", Code: CodeLockLost, Detail: "lock lost"}

// ErrStaleToken is matched (errors.Is) by the error a Fence returns for a
// token older than one it has seen. It is a *lease.Error with
// CodeStaleToken; treat it as read-only.
var ErrStaleToken error = &lease.Error{Package: "lock", Code: CodeStaleToken, Detail: "stale fencing token"}

// providerFault reports a provider that broke its contract.
func providerFault(op, detail string) error {
	return &lease.Error{Package: "lock", Code: CodeProviderFault, Op: op, Detail: detail}
}

// StaleTokenError is the error a Fence returns for a stale token. It
// matches ErrStaleToken and unwraps to a *lease.Error with CodeStaleToken.
// It is a plain value, safe to share.
type StaleTokenError struct {
	Name    string // the lock name
	Token   uint64 // the token refused
	Highest uint64 // the highest token seen for Name
}

// Error formats as `lock: stale fencing token 3 for "name" (seen 5)
// [LS_STALE_TOKEN]`.
func (e *StaleTokenError) Error() string { return e.Unwrap().Error() }

// Unwrap returns the *lease.Error that e stands for; it matches
// ErrStaleToken.
func (e *StaleTokenError) Unwrap() error {
	return &lease.Error{Package: "lock", Code: CodeStaleToken, Err: ErrStaleToken,
		Detail: "stale fencing token " + strconv.FormatUint(e.Token, 10) + " for " + strconv.Quote(e.Name) +
			" (seen " + strconv.FormatUint(e.Highest, 10) + ")"}
}
