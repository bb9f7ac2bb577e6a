package lease

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"strconv"
)

// The snapshot format, version 1 (docs/snapshots.md has the full layout):
// the magic bytes, the version, then the header, purposes, live leases,
// ended leases and keys, every integer a varint, and last a CRC-32C of
// everything before it. Varints keep a million leases to about 30 MB, and
// the checksum turns a torn or corrupted file into an error rather than a
// wrong state.
const (
	snapshotMagic   = "LEASESNP"
	snapshotVersion = 1
	// minLeaseBytes is the fewest bytes a lease takes: a decoder never
	// allocates for more leases (or keys) than the data could hold.
	minLeaseBytes = 7
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// snapshotEncoder appends to a buffer and writes it out in chunks, keeping
// the checksum of what it wrote.
type snapshotEncoder struct {
	w   io.Writer
	buf []byte
	n   int64
	crc uint32
	err error
}

const encoderChunk = 64 << 10

func newSnapshotEncoder(w io.Writer) *snapshotEncoder {
	return &snapshotEncoder{w: w, buf: make([]byte, 0, encoderChunk+1024)}
}

func (e *snapshotEncoder) uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *snapshotEncoder) varint(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }

func (e *snapshotEncoder) string(s string) {
	e.uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
	e.maybeFlush()
}

func (e *snapshotEncoder) maybeFlush() {
	if len(e.buf) >= encoderChunk {
		e.flush()
	}
}

func (e *snapshotEncoder) flush() {
	if e.err == nil && len(e.buf) > 0 {
		e.crc = crc32.Update(e.crc, castagnoli, e.buf)
		var n int
		n, e.err = e.w.Write(e.buf)
		e.n += int64(n)
	}
	e.buf = e.buf[:0]
}

func (e *snapshotEncoder) finish() (int64, error) {
	e.flush()
	if e.err != nil {
		return e.n, e.err
	}
	e.buf = binary.LittleEndian.AppendUint32(e.buf, e.crc)
	n, err := e.w.Write(e.buf)
	return e.n + int64(n), err
}

func (sn *Snapshot) encode(e *snapshotEncoder) {
	e.buf = append(e.buf, snapshotMagic...)
	e.uvarint(snapshotVersion)
	e.varint(sn.at)
	e.uvarint(uint64(sn.lastID))
	e.uvarint(uint64(sn.revision))
	e.uvarint(uint64(len(sn.purposes)))
	for _, p := range sn.purposes {
		e.string(p)
	}
	e.uvarint(uint64(len(sn.live)))
	for i := range sn.live {
		encodeLease(e, &sn.live[i])
	}
	e.uvarint(uint64(len(sn.ended)))
	for i := range sn.ended {
		e.buf = append(e.buf, byte(sn.ended[i].state))
		encodeLease(e, &sn.ended[i])
	}
	e.uvarint(uint64(len(sn.keys)))
	for _, k := range sn.keys {
		e.string(k.key)
		// 0 for a nil value, length+1 otherwise: Get tells the two apart.
		if k.value == nil {
			e.uvarint(0)
		} else {
			e.uvarint(uint64(len(k.value)) + 1)
			e.buf = append(e.buf, k.value...)
		}
		e.uvarint(uint64(k.lease))
		e.maybeFlush()
	}
}

func encodeLease(e *snapshotEncoder, l *snapshotLease) {
	e.uvarint(uint64(l.id))
	e.string(l.holder)
	e.uvarint(uint64(l.purpose))
	e.varint(l.ttl)
	e.varint(l.granted)
	e.uvarint(uint64(l.renewed - l.granted))
	e.varint(l.revision)
}

// snapshotDecoder reads from a byte slice; the first fault sticks, and
// every later read returns zero values.
type snapshotDecoder struct {
	data   []byte
	err    *Error
	holder string // the last holder read
}

func (d *snapshotDecoder) fail(detail string) {
	if d.err == nil {
		d.err = invalidArgument("snapshot", "read snapshot", 0, detail)
		d.data = nil
	}
}

func (d *snapshotDecoder) uvarint(what string) uint64 {
	v, n := binary.Uvarint(d.data)
	if n <= 0 {
		d.fail("truncated or malformed " + what)
		return 0
	}
	d.data = d.data[n:]
	return v
}

func (d *snapshotDecoder) varint(what string) int64 {
	v, n := binary.Varint(d.data)
	if n <= 0 {
		d.fail("truncated or malformed " + what)
		return 0
	}
	d.data = d.data[n:]
	return v
}

func (d *snapshotDecoder) take(n uint64, what string) []byte {
	if n > uint64(len(d.data)) {
		d.fail("truncated " + what)
		return nil
	}
	b := d.data[:n:n]
	d.data = d.data[n:]
	return b
}

func (d *snapshotDecoder) string(what string) string {
	return string(d.take(d.uvarint(what), what))
}

// count reads a count of items taking at least size bytes each, refusing
// one the rest of the data could not hold.
func (d *snapshotDecoder) count(what string, size int) int {
	n := d.uvarint(what + " count")
	if n > uint64(len(d.data)/size) {
		d.fail(what + " count " + strconv.FormatUint(n, 10) + " exceeds the data")
		return 0
	}
	return int(n)
}

func decodeSnapshot(data []byte) (*Snapshot, error) {
	d := &snapshotDecoder{}
	if len(data) < len(snapshotMagic)+4 || string(data[:len(snapshotMagic)]) != snapshotMagic {
		d.fail("not a lease snapshot")
		return nil, d.err
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		d.fail("checksum mismatch: the snapshot is corrupt or truncated")
		return nil, d.err
	}
	d.data = body[len(snapshotMagic):]
	if v := d.uvarint("version"); d.err == nil && v != snapshotVersion {
		d.fail("version " + strconv.FormatUint(v, 10) + " is not supported (this package reads version " + strconv.Itoa(snapshotVersion) + ")")
	}
	sn := &Snapshot{
		at:       d.varint("instant"),
		lastID:   ID(d.uvarint("last ID")),
		revision: int64(d.uvarint("revision")),
	}
	sn.purposes = make([]string, d.count("purpose", 2))
	for i := range sn.purposes {
		sn.purposes[i] = d.string("purpose")
	}
	sn.live = make([]snapshotLease, d.count("live lease", minLeaseBytes))
	for i := range sn.live {
		decodeLease(d, &sn.live[i], stateActive)
	}
	sn.ended = make([]snapshotLease, d.count("ended lease", minLeaseBytes+1))
	for i := range sn.ended {
		var state leaseState
		if b := d.take(1, "ended lease"); len(b) == 1 {
			state = leaseState(b[0])
		}
		decodeLease(d, &sn.ended[i], state)
	}
	sn.keys = make([]snapshotKey, d.count("key", 4))
	for i := range sn.keys {
		k := &sn.keys[i]
		k.key = d.string("key")
		if n := d.uvarint("value"); n > 0 {
			k.value = append([]byte{}, d.take(n-1, "value")...)
		}
		k.lease = ID(d.uvarint("key's lease"))
	}
	if d.err == nil && len(d.data) != 0 {
		d.fail(strconv.Itoa(len(d.data)) + " bytes after the keys")
	}
	if d.err != nil {
		return nil, d.err
	}
	return sn, nil
}

func decodeLease(d *snapshotDecoder, l *snapshotLease, state leaseState) {
	l.state = state
	l.id = ID(d.uvarint("lease ID"))
	// Holders repeat: the one before is shared rather than copied again.
	if h := d.take(d.uvarint("holder"), "holder"); string(h) == d.holder {
		l.holder = d.holder
	} else {
		l.holder = string(h)
		d.holder = l.holder
	}
	l.purpose = uint16(min(d.uvarint("purpose"), 1<<16-1))
	l.ttl = d.varint("TTL")
	l.granted = d.varint("grant time")
	l.renewed = l.granted + int64(d.uvarint("renewal time"))
	l.revision = d.varint("lease revision")
}
