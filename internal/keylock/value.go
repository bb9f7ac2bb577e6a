package keylock

import "encoding/binary"

// A lock's key holds the execution ID and the holder's value in one byte
// string: the length of the execution ID as a uvarint, the execution ID,
// then the value. A length prefix keeps the two apart whatever bytes either
// holds. A replicated node keeps its keys in its log and snapshots, so the
// encoding is a stored format: it must not change.

// encodeValue encodes a lock key's value.
func encodeValue(executionID string, value []byte) []byte {
	b := make([]byte, 0, binary.MaxVarintLen64+len(executionID)+len(value))
	b = binary.AppendUvarint(b, uint64(len(executionID)))
	b = append(b, executionID...)
	return append(b, value...)
}

// decodeValue splits a lock key's value; ok is false for bytes that are not
// one (a key under the prefix that the Locks did not write).
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
