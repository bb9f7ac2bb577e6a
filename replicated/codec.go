package replicated

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/leasehold/lease"
)

// The log's command encoding. An entry is
//
//	version byte | stamp varint (unix nanoseconds) | count uvarint | commands
//
// and a command is its op byte followed by its fields: strings and byte
// slices as uvarint length and bytes (a byte slice's length is stored plus
// one, so that nil and empty stay apart), IDs as uvarint, TTLs as varint
// nanoseconds, purposes as uvarint. An entry with no commands is a tick: it
// only moves the log's time, ending whatever is due by its stamp.

const entryVersion = 1

type opCode byte

const (
	opGrant opCode = iota + 1
	opGrantWithKey
	opRenew
	opRenewTTL
	opRevoke
	opPut
	opDelete
)

// opClaim is a claim store call (see claimcall.go), its value the call. It
// stands apart from the lease service's operations, so that those can grow.
const opClaim opCode = 64

// opNames are the operation names errors carry.
var opNames = [...]string{
	opGrant:        "grant",
	opGrantWithKey: "grant",
	opRenew:        "renew",
	opRenewTTL:     "renew",
	opRevoke:       "revoke",
	opPut:          "put",
	opDelete:       "delete",
}

func (o opCode) String() string {
	if o == opClaim {
		return "claim store"
	}
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "unknown"
}

// command is one mutation of the service.
type command struct {
	op      opCode
	holder  string
	purpose lease.Purpose
	ttl     time.Duration
	key     string
	value   []byte
	id      lease.ID
}

// result is what the FSM answers for one command.
type result struct {
	lease lease.Lease
	ok    bool        // Delete: whether the key was present
	claim *claimReply // opClaim: the call's answer
	err   error
	// prop, in an answer of the responder only, is the proposal whose
	// outcome the command's caller settles, the command at pos of it.
	prop *proposal
	pos  int
}

var errCorrupt = errors.New("replicated: corrupt log entry")

// encodeEntry appends the entry for cmds, stamped with stamp, to buf.
func encodeEntry(buf []byte, stamp int64, cmds []command) []byte {
	buf = encodeHeader(buf, stamp, len(cmds))
	for i := range cmds {
		buf = appendCommand(buf, &cmds[i])
	}
	return buf
}

// encodeHeader appends the header of an entry of n commands.
func encodeHeader(buf []byte, stamp int64, n int) []byte {
	buf = append(buf, entryVersion)
	buf = binary.AppendVarint(buf, stamp)
	return binary.AppendUvarint(buf, uint64(n))
}

func appendCommand(buf []byte, c *command) []byte {
	buf = append(buf, byte(c.op))
	switch c.op {
	case opGrant, opGrantWithKey:
		buf = appendString(buf, c.holder)
		buf = binary.AppendUvarint(buf, uint64(c.purpose))
		buf = binary.AppendVarint(buf, int64(c.ttl))
		if c.op == opGrantWithKey {
			buf = appendString(buf, c.key)
			buf = appendBytes(buf, c.value)
		}
	case opRenew, opRevoke:
		buf = binary.AppendUvarint(buf, uint64(c.id))
	case opRenewTTL:
		buf = binary.AppendUvarint(buf, uint64(c.id))
		buf = binary.AppendVarint(buf, int64(c.ttl))
	case opPut:
		buf = appendString(buf, c.key)
		buf = appendBytes(buf, c.value)
		buf = binary.AppendUvarint(buf, uint64(c.id))
	case opDelete:
		buf = appendString(buf, c.key)
	case opClaim:
		buf = appendBytes(buf, c.value)
	}
	return buf
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func appendBytes(buf, b []byte) []byte {
	if b == nil {
		return append(buf, 0)
	}
	buf = binary.AppendUvarint(buf, uint64(len(b))+1)
	return append(buf, b...)
}

// decoder reads an entry; the first malformed field sets err and every
// read after it returns zero values.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) fail() { d.err, d.buf = errCorrupt, nil }

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.buf) == 0 {
		d.fail()
		return 0
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b
}

func (d *decoder) raw(n uint64) []byte {
	if n > uint64(len(d.buf)) {
		d.fail()
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) string() string { return string(d.raw(d.uvarint())) }

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n == 0 || d.err != nil {
		return nil
	}
	return d.raw(n - 1) // the service copies what it keeps
}

// decodeEntry decodes an entry made by encodeEntry. The commands' byte
// slices alias data.
func decodeEntry(data []byte) (stamp int64, cmds []command, err error) {
	d := decoder{buf: data}
	if d.byte() != entryVersion {
		return 0, nil, errCorrupt
	}
	stamp = d.varint()
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.buf)) { // every command takes at least a byte
		return 0, nil, errCorrupt
	}
	cmds = make([]command, n)
	for i := range cmds {
		c := &cmds[i]
		c.op = opCode(d.byte())
		switch c.op {
		case opGrant, opGrantWithKey:
			c.holder = d.string()
			p := d.uvarint()
			if p > 0xffff {
				d.fail()
			}
			c.purpose = lease.Purpose(p)
			c.ttl = time.Duration(d.varint())
			if c.op == opGrantWithKey {
				c.key = d.string()
				c.value = d.bytes()
			}
		case opRenew, opRevoke:
			c.id = lease.ID(d.uvarint())
		case opRenewTTL:
			c.id = lease.ID(d.uvarint())
			c.ttl = time.Duration(d.varint())
		case opPut:
			c.key = d.string()
			c.value = d.bytes()
			c.id = lease.ID(d.uvarint())
		case opDelete:
			c.key = d.string()
		case opClaim:
			c.value = d.bytes()
		default:
			d.fail()
		}
		if d.err != nil {
			return 0, nil, d.err
		}
	}
	if len(d.buf) != 0 {
		return 0, nil, errCorrupt
	}
	return stamp, cmds, nil
}
