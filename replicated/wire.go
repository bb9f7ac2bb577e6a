package replicated

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/raft"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// The forwarding wire format. Both directions carry frames: a uvarint
// length and that many bytes. A request is
//
//	kind byte ('W' a command, 'Q' a linearizable read, 'M' a membership
//	change, 'C' a claim store call) | timeout varint (ns, 0 none) | body
//
// or a batch of requests a follower coalesced, answered with a batch of
// responses (see serveBatch):
//
//	'B' | 0 | count uvarint | (length uvarint | request) per request
//
// where a command's body is the log's command encoding (appendCommand), a
// read's is its op byte, lease ID, purpose, key and limit, and a
// membership change's its op byte, server ID and address. A response is
//
//	status byte | body
//
// with status respOK followed by the result's fields, or one of the error
// statuses below followed by what the caller needs to rebuild the error
// (respLease: the *lease.Error's fields, then, for an error of the claim
// package that is more than its *lease.Error, its kind and fields).

const (
	reqWrite  byte = 'W'
	reqRead   byte = 'Q'
	reqMember byte = 'M' // a membership change: op byte, id, address
	// reqBatch carries several requests, served together (see serveBatch).
	reqBatch byte = 'B'
)

const (
	respOK        byte = iota // the call's result
	respLease                 // a *lease.Error: the service's answer
	respNotLeader             // the node does not lead: nothing was applied
	respUncertain             // leadership lost while committing: it may have been applied
	respClosed                // the node closed while serving the call
	respContext               // the call's timeout passed at the leader
	respOther                 // any other failure, as text
)

// The kinds of error that may follow a respLease's *lease.Error.
const (
	errClaimNotFound byte = 1 // a *claim.NotFoundError: its queue and item
)

// maxFrame bounds a frame either side reads; a larger one ends the
// connection.
const maxFrame = 64 << 20

var errFrameTooLarge = errors.New("replicated: forwarded frame too large")

func writeFrame(w *bufio.Writer, payload []byte) error {
	var hdr [binary.MaxVarintLen64]byte
	if _, err := w.Write(hdr[:binary.PutUvarint(hdr[:], uint64(len(payload)))]); err != nil {
		return err
	}
	if _, err := w.Write(payload); err != nil {
		return err
	}
	return w.Flush()
}

func readFrame(r *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if n > maxFrame {
		return nil, errFrameTooLarge
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

func appendQuery(buf []byte, q *query) []byte {
	buf = append(buf, byte(q.op))
	buf = binary.AppendUvarint(buf, uint64(q.id))
	buf = binary.AppendUvarint(buf, uint64(q.purpose))
	buf = appendString(buf, q.key)
	return binary.AppendVarint(buf, int64(q.limit))
}

func decodeQuery(d *decoder) query {
	q := query{op: readOp(d.byte()), id: lease.ID(d.uvarint()), purpose: lease.Purpose(d.uvarint())}
	q.key = d.string()
	q.limit = int(d.varint())
	if q.op < readInfo || q.op > readUse {
		d.fail()
	}
	return q
}

// decodeCommand decodes one command made by appendCommand.
func decodeCommand(data []byte) (command, error) {
	// An entry of one command, stamp 0, reuses the entry decoder.
	entry := encodeHeader(nil, 0, 1)
	_, cmds, err := decodeEntry(append(entry, data...))
	if err != nil {
		return command{}, err
	}
	return cmds[0], nil
}

func appendTime(buf []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(buf, 0)
	}
	buf = append(buf, 1)
	return binary.AppendVarint(buf, t.UnixNano())
}

func (d *decoder) time() time.Time {
	if d.byte() == 0 {
		return time.Time{}
	}
	return time.Unix(0, d.varint()).UTC()
}

func appendLease(buf []byte, l *lease.Lease) []byte {
	buf = binary.AppendUvarint(buf, uint64(l.ID))
	buf = appendString(buf, l.Holder)
	buf = binary.AppendUvarint(buf, uint64(l.Purpose))
	buf = binary.AppendVarint(buf, int64(l.TTL))
	buf = appendTime(buf, l.GrantedAt)
	buf = appendTime(buf, l.RenewedAt)
	buf = appendTime(buf, l.ExpiresAt)
	buf = binary.AppendVarint(buf, l.Revision)
	if l.Keys == nil {
		return append(buf, 0)
	}
	buf = binary.AppendUvarint(buf, uint64(len(l.Keys))+1)
	for _, k := range l.Keys {
		buf = appendString(buf, k)
	}
	return buf
}

func (d *decoder) lease() lease.Lease {
	l := lease.Lease{ID: lease.ID(d.uvarint()), Holder: d.string(), Purpose: lease.Purpose(d.uvarint())}
	l.TTL = time.Duration(d.varint())
	l.GrantedAt, l.RenewedAt, l.ExpiresAt = d.time(), d.time(), d.time()
	l.Revision = d.varint()
	if n := d.count(); n > 0 {
		l.Keys = make([]string, 0, n-1)
		for range n - 1 {
			l.Keys = append(l.Keys, d.string())
		}
	}
	return l
}

// count reads a count stored plus one (0 for nil), bounded by what is left.
func (d *decoder) count() uint64 {
	n := d.uvarint()
	if n > uint64(len(d.buf))+1 {
		d.fail()
		return 0
	}
	return n
}

func appendBool(buf []byte, b bool) []byte {
	if b {
		return append(buf, 1)
	}
	return append(buf, 0)
}

// appendAnswer encodes a successful answer (a write's result is an answer
// with lease and ok).
func appendAnswer(buf []byte, a *answer) []byte {
	buf = append(buf, respOK)
	buf = appendLease(buf, &a.lease)
	buf = appendBool(buf, a.ok)
	buf = appendBytes(buf, a.value)
	buf = binary.AppendUvarint(buf, uint64(a.id))
	if a.leases == nil {
		buf = append(buf, 0)
	} else {
		buf = binary.AppendUvarint(buf, uint64(len(a.leases))+1)
		for i := range a.leases {
			buf = appendLease(buf, &a.leases[i])
		}
	}
	if a.kvs == nil {
		return append(buf, 0)
	}
	buf = binary.AppendUvarint(buf, uint64(len(a.kvs))+1)
	for _, kv := range a.kvs {
		buf = appendString(buf, kv.Key)
		buf = appendBytes(buf, kv.Value)
		buf = binary.AppendUvarint(buf, uint64(kv.LeaseID))
	}
	return buf
}

func decodeAnswer(d *decoder) answer {
	var a answer
	a.lease = d.lease()
	a.ok = d.byte() == 1
	a.value = d.bytes()
	a.id = lease.ID(d.uvarint())
	if n := d.count(); n > 0 {
		a.leases = make([]lease.Lease, 0, n-1)
		for range n - 1 {
			a.leases = append(a.leases, d.lease())
		}
	}
	if n := d.count(); n > 0 {
		a.kvs = make([]lease.KeyValue, 0, n-1)
		for range n - 1 {
			kv := lease.KeyValue{Key: d.string()}
			kv.Value = d.bytes()
			kv.LeaseID = lease.ID(d.uvarint())
			a.kvs = append(a.kvs, kv)
		}
	}
	return a
}

// appendError encodes err, the leader's answer to a forwarded call.
func appendError(buf []byte, err error) []byte {
	var le *lease.Error
	switch {
	case errors.Is(err, raft.ErrLeadershipLost): // ErrOutcomeUnknown's *lease.Error included
		return append(buf, respUncertain)
	case errors.As(err, &le) && le.Code == lease.CodeClosed:
		return append(buf, respClosed)
	case errors.As(err, &le):
		buf = append(buf, respLease)
		buf = appendString(buf, string(le.Code))
		buf = appendString(buf, le.Op)
		buf = binary.AppendUvarint(buf, uint64(le.LeaseID))
		buf = appendString(buf, le.Field)
		buf = binary.AppendUvarint(buf, uint64(le.Expected))
		buf = binary.AppendUvarint(buf, uint64(le.Actual))
		buf = appendString(buf, le.Key)
		buf = appendString(buf, le.Detail)
		// What follows the *lease.Error says which error of the claim
		// package it stands for, if any; a node of an earlier release
		// reads the *lease.Error alone.
		var nf *claim.NotFoundError
		if errors.As(err, &nf) {
			buf = append(buf, errClaimNotFound)
			buf = appendString(buf, nf.Queue)
			buf = binary.AppendUvarint(buf, uint64(nf.Item))
		}
		return buf
	case errors.Is(err, ErrNotLeader):
		return append(buf, respNotLeader)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return append(buf, respContext)
	}
	buf = append(buf, respOther)
	return appendString(buf, err.Error())
}

// decodeError rebuilds the leader's error for operation op.
func decodeError(d *decoder, status byte, op string) error {
	switch status {
	case respLease:
		le := &lease.Error{Code: lease.Code(d.string()), Op: d.string(), LeaseID: lease.ID(d.uvarint()), Field: d.string()}
		le.Expected, le.Actual = lease.Purpose(d.uvarint()), lease.Purpose(d.uvarint())
		le.Key, le.Detail = d.string(), d.string()
		if len(d.buf) == 0 || d.err != nil {
			return le
		}
		if d.byte() == errClaimNotFound {
			return &claim.NotFoundError{Op: le.Op, Queue: d.string(), Item: claim.ItemID(d.uvarint())}
		}
		return le // a kind of a later release: the *lease.Error stands
	case respNotLeader:
		return errRemoteNotLeader
	case respUncertain:
		return uncertain(op)
	case respClosed:
		return errRemoteClosed
	case respContext:
		return fmt.Errorf("replicated: %s: the call's time ran out at the leader: %w", op, context.DeadlineExceeded)
	case respOther:
		return fmt.Errorf("replicated: %s: at the leader: %s", op, d.string())
	}
	d.fail()
	return errCorrupt
}
