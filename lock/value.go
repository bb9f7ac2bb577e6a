package lock

import (
	"context"
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
// is copied. A value longer than MaxValueSize is bad input
// (lockprovider.CheckValue). Memory implements it. Implementations must be
// safe for concurrent use.
type ValueAcquirer interface {
	AcquireValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*Lease, error)
}
