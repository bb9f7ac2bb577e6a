package lock

import (
	"context"
	"strconv"
	"time"
)

// MaxValueSize is the largest value a holder may attach to a holding
// (WithValue, ValueAcquirer): a few hundred bytes of identity or address for
// whoever asks who holds a lock, not a payload.
const MaxValueSize = 1024

// ValueAcquirer is implemented by a Provider that can attach a small value
// to a holding, which an Inspector then reports. AcquireValue is Acquire
// with the value: the same contract, and the value is stored with the
// holding for as long as it is held (Renew keeps it). value may be nil; it
// is copied. A value longer than MaxValueSize is bad input (CheckValue).
// Memory implements it. Implementations must be safe for concurrent use.
type ValueAcquirer interface {
	AcquireValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error)
}

// CheckValue returns the error a provider must return for a value that may
// not be attached to a holding (longer than MaxValueSize), or nil.
func CheckValue(value []byte) error {
	if len(value) > MaxValueSize {
		return invalid("acquire", "value", strconv.Itoa(len(value))+" bytes is more than MaxValueSize ("+strconv.Itoa(MaxValueSize)+")")
	}
	return nil
}
