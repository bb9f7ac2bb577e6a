package lock

import (
	"context"
	"encoding/binary"
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

// A Memory lock's key holds the execution ID and the holder's value in one
// byte string: the length of the execution ID as a uvarint, the execution
// ID, then the value. A length prefix keeps the two apart whatever bytes
// either holds. (Before values, the key held the bare execution ID; keys
// live only in the process's service, so no older encoding can be read.)

// encodeValue encodes a lock key's value.
func encodeValue(executionID string, value []byte) []byte {
	b := make([]byte, 0, binary.MaxVarintLen64+len(executionID)+len(value))
	b = binary.AppendUvarint(b, uint64(len(executionID)))
	b = append(b, executionID...)
	return append(b, value...)
}

// decodeValue splits a lock key's value; ok is false for bytes that are not
// one (a key under the prefix that the Memory did not write).
func decodeValue(b []byte) (executionID string, value []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", nil, false
	}
	executionID = string(b[k : k+int(n)])
	if rest := b[k+int(n):]; len(rest) > 0 {
		value = rest
	}
	return executionID, value, executionID != ""
}
