package lock

import (
	"errors"
	"strconv"
)

// ErrLockLost is the cause (see context.Cause) with which a Manager cancels
// the context of a function whose lock is lost, or about to expire without a
// confirmed renewal. Do and TryLock also return it when the lock was lost
// while the function ran.
var ErrLockLost = errors.New("lock: lock lost")

// ErrStaleToken is matched (errors.Is) by the error a Fence returns for a
// token older than one it has seen.
var ErrStaleToken = errors.New("lock: stale fencing token")

// StaleTokenError is the error a Fence returns for a stale token. It matches
// ErrStaleToken. It is a plain value, safe to share.
type StaleTokenError struct {
	Name    string // the lock name
	Token   uint64 // the token refused
	Highest uint64 // the highest token seen for Name
}

// Error formats as `lock: stale fencing token 3 for "name" (seen 5)`.
func (e *StaleTokenError) Error() string {
	return ErrStaleToken.Error() + " " + strconv.FormatUint(e.Token, 10) + " for " +
		strconv.Quote(e.Name) + " (seen " + strconv.FormatUint(e.Highest, 10) + ")"
}

// Unwrap returns ErrStaleToken.
func (e *StaleTokenError) Unwrap() error { return ErrStaleToken }
