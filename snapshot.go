package lease

import (
	"cmp"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
)

// Snapshot is a copy of a Service's whole state at one instant: its live
// leases (holder, purpose, TTL, grant and renewal times), its keys and
// values, its revision and ID counters, and the ended leases it remembers
// (so that Renew on one still tells expired from revoked). Take one with
// Service.Snapshot, write it with WriteTo, read it back with ReadSnapshot,
// and make a Service of it with Restore. The format is versioned and
// documented in docs/snapshots.md.
//
// Keep-alives, hooks, subscriptions and the audit trail belong to the
// running process and are not part of a snapshot.
//
// A Snapshot is immutable and safe for concurrent use.
type Snapshot struct {
	at       int64 // unix nanoseconds
	lastID   ID
	revision int64
	// purposes are the names of the purposes the leases refer to, by the
	// index a snapshotLease carries: purposes are registered per process,
	// so they travel by name.
	purposes []string
	live     []snapshotLease // by ID
	ended    []snapshotLease // oldest ending first
	keys     []snapshotKey   // by key
}

type snapshotLease struct {
	id       ID
	holder   string
	purpose  uint16 // index into Snapshot.purposes
	state    leaseState
	ttl      int64
	granted  int64 // unix nanoseconds
	renewed  int64 // unix nanoseconds
	revision int64
}

type snapshotKey struct {
	key   string
	value []byte // shared with the service: values are never changed in place
	lease ID
}

// At returns the instant the snapshot was taken, on the service's time base.
func (sn *Snapshot) At() time.Time { return time.Unix(0, sn.at) }

// Len returns the number of live leases in the snapshot.
func (sn *Snapshot) Len() int { return len(sn.live) }

// Snapshot returns the service's state at one instant: the service's time
// when it is called, after everything due at that time has been settled.
// It holds the service's lock while it copies, which for a million leases
// takes tens of milliseconds; writing the copy out (WriteTo) does not. It
// returns LS_CLOSED after Close.
func (s *Service) Snapshot() (*Snapshot, error) {
	s.mu.Lock()
	defer s.unlock()
	now, err := s.begin("snapshot", 0)
	if err != nil {
		return nil, err
	}
	sn := &Snapshot{
		at:       s.at(now).UnixNano(),
		lastID:   s.lastID,
		revision: s.revision,
		live:     make([]snapshotLease, 0, s.heap.Len()),
		keys:     make([]snapshotKey, 0, s.keys.kv.Len()),
	}
	capture := func(e *entry) snapshotLease {
		return snapshotLease{
			id:       e.id,
			holder:   e.holder(),
			purpose:  uint16(e.purpose), // mapped to its index below
			state:    e.state,
			ttl:      e.ttl,
			granted:  s.at(e.granted).UnixNano(),
			renewed:  s.at(e.renewed).UnixNano(),
			revision: e.revision,
		}
	}
	s.leases.ascend(func(e *entry) {
		if e.state == stateActive {
			sn.live = append(sn.live, capture(e))
		}
	})
	s.ended.each(func(e *entry) { sn.ended = append(sn.ended, capture(e)) })
	// Purposes are numbered in order of first use, so that the same state
	// always encodes to the same bytes.
	index := make(map[uint16]uint16)
	for _, list := range [][]snapshotLease{sn.live, sn.ended} {
		for i := range list {
			p := list[i].purpose
			n, ok := index[p]
			if !ok {
				n = uint16(len(sn.purposes))
				index[p] = n
				sn.purposes = append(sn.purposes, Purpose(p).String())
			}
			list[i].purpose = n
		}
	}
	s.keys.kv.Ascend(func(it kvItem) bool {
		sn.keys = append(sn.keys, snapshotKey(it))
		return true
	})
	return sn, nil
}

// Restore returns a new Service, configured by opts, holding the state of
// sn. Its Stats count from the restored live set: the live leases are
// counted, and nothing granted, renewed or ended before the snapshot is.
//
// Time spent between the snapshot and the restore counts against every
// lease, and a lease never gets more time than it had: with R the new
// service's time when Restore is called, a lease that had d left at
// sn.At() expires at the earlier of its recorded expiry and R+d. When the
// clock has moved on (the usual case: the process was down), every time is
// kept as recorded, and a lease whose expiry passed while nothing ran is
// not forgotten: it is restored and ends, as expired at its expiry, at the
// first settle (its keys are deleted, the OnEnd subscribers are told, and
// Renew answers LS_EXPIRED). When the clock reads before sn.At() (another
// machine, or a clock stepped back), every time moves back by the
// difference, so each lease keeps exactly the time it had left. When R
// equals sn.At() the state is restored exactly, which is what a replica
// applying a snapshot needs.
//
// Purposes travel by name; a name this process has not defined is defined
// as by NewPurpose. A snapshot naming more purposes than a process may
// define gets an *Error with CodeInvalidArgument, and no Service; so does
// a bad option, as for New.
func Restore(sn *Snapshot, opts ...Option) (*Service, error) {
	if sn == nil {
		return nil, invalidArgument("snapshot", "restore", 0, "must not be nil")
	}
	o, err := buildOptions(opts) // before any purpose is defined: a refusal changes nothing
	if err != nil {
		return nil, err
	}
	purposes := make([]Purpose, len(sn.purposes))
	for i, name := range sn.purposes {
		p, err := ParsePurpose(name)
		if err != nil {
			if p, err = NewPurpose(name); err != nil {
				return nil, err
			}
		}
		purposes[i] = p
	}
	s := newService(o)
	s.mu.Lock()
	defer s.unlock()
	now := s.now()
	// shift moves a recorded unix time onto the new service's time base,
	// back by however far the new clock is behind the snapshot.
	shift := min(0, now-s.base.Nanos(time.Unix(0, sn.at)))
	toBase := func(unix int64) int64 {
		n := s.base.Nanos(time.Unix(0, unix))
		if n < math.MinInt64-shift {
			return math.MinInt64 // saturate, as Nanos does
		}
		return n + shift
	}
	s.lastID = sn.lastID
	s.revision = sn.revision
	ended := sn.ended
	if c := len(s.ended.buf); len(ended) > c {
		ended = ended[len(ended)-c:] // the oldest are forgotten, as they would have been
	}
	// The lease table takes IDs in increasing order, live and ended mixed:
	// the live leases are in ID order already, the few ended ones are
	// sorted and merged in.
	byID := make([]*snapshotLease, len(ended))
	for i := range ended {
		byID[i] = &ended[i]
	}
	slices.SortFunc(byID, func(a, b *snapshotLease) int { return cmp.Compare(a.id, b.id) })
	for i := 0; i < len(sn.live) || len(byID) > 0; {
		var l *snapshotLease
		if i < len(sn.live) && (len(byID) == 0 || sn.live[i].id < byID[0].id) {
			l = &sn.live[i]
			i++
		} else {
			l, byID = byID[0], byID[1:]
		}
		e := s.leases.add(l.id)
		*e = entry{
			id:       l.id,
			purpose:  purposes[l.purpose],
			state:    l.state,
			ttl:      l.ttl,
			granted:  toBase(l.granted),
			renewed:  toBase(l.renewed),
			revision: l.revision,
			index:    -1, // an ended entry gets its slot below
		}
		e.setHolder(l.holder)
		if e.state == stateActive {
			s.heap.Push(e.expires(), uint64(e.id), e)
			s.counted(e.purpose).restored++ // a restored service counts from its live set
		}
	}
	for i := range ended {
		// Looked up again: adding to the table may have moved it.
		s.ended.add(s.leases.get(ended[i].id))
	}
	for _, k := range sn.keys {
		s.keys.put(k.key, k.value, k.lease)
		if k.lease != 0 {
			s.leases.get(k.lease).keys++
		}
	}
	s.rearm(now)
	return s, nil
}

// check reports the first inconsistency of a decoded snapshot: what
// Restore relies on (IDs in order and issued, keys on live leases, valid
// states and TTLs) holds for every snapshot ReadSnapshot returns.
func (sn *Snapshot) check() error {
	bad := func(detail string) error { return invalidArgument("snapshot", "read snapshot", 0, detail) }
	if sn.revision < 0 {
		return bad("negative revision")
	}
	if len(sn.purposes) > MaxPurposes {
		return bad(strconv.Itoa(len(sn.purposes)) + " purposes")
	}
	for _, name := range sn.purposes {
		if err := checkPurposeName(name); err != nil {
			return bad("purpose " + strconv.Quote(name) + " is not a valid name")
		}
	}
	checkLease := func(l *snapshotLease, live bool) error {
		switch {
		case l.id == 0 || l.id > sn.lastID:
			return bad("lease " + strconv.FormatUint(uint64(l.id), 10) + " was never issued")
		case l.holder == "":
			return bad("lease " + strconv.FormatUint(uint64(l.id), 10) + " has no holder")
		case uint64(len(l.holder)) > maxHolderLen:
			return bad("lease " + strconv.FormatUint(uint64(l.id), 10) + " has a holder longer than 4 GiB")
		case int(l.purpose) >= len(sn.purposes):
			return bad("lease " + strconv.FormatUint(uint64(l.id), 10) + " has no purpose")
		case l.ttl <= 0:
			return bad("lease " + strconv.FormatUint(uint64(l.id), 10) + " has no TTL")
		case l.renewed < l.granted:
			return bad("lease " + strconv.FormatUint(uint64(l.id), 10) + " was renewed before it was granted")
		case live != (l.state == stateActive) || l.state > stateRevoked:
			return bad("lease " + strconv.FormatUint(uint64(l.id), 10) + " has a bad state")
		}
		return nil
	}
	for i := range sn.live {
		if i > 0 && sn.live[i].id <= sn.live[i-1].id {
			return bad("live leases out of order")
		}
		if err := checkLease(&sn.live[i], true); err != nil {
			return err
		}
	}
	isLive := func(id ID) bool {
		_, found := slices.BinarySearchFunc(sn.live, id, func(l snapshotLease, id ID) int { return cmp.Compare(l.id, id) })
		return found
	}
	ended := make([]ID, len(sn.ended))
	for i := range sn.ended {
		if err := checkLease(&sn.ended[i], false); err != nil {
			return err
		}
		ended[i] = sn.ended[i].id
	}
	slices.Sort(ended)
	for i, id := range ended {
		if (i > 0 && id == ended[i-1]) || isLive(id) {
			return bad("lease " + strconv.FormatUint(uint64(id), 10) + " appears twice")
		}
	}
	for i, k := range sn.keys {
		switch {
		case k.key == "":
			return bad("empty key")
		case i > 0 && k.key <= sn.keys[i-1].key:
			return bad("keys out of order")
		case k.lease != 0 && !isLive(k.lease):
			return bad("key " + strconv.Quote(k.key) + " is attached to no live lease")
		}
	}
	return nil
}

// WriteTo writes the snapshot to w in the snapshot format and returns the
// number of bytes written. It implements io.WriterTo.
func (sn *Snapshot) WriteTo(w io.Writer) (int64, error) {
	enc := newSnapshotEncoder(w)
	sn.encode(enc)
	return enc.finish()
}

// ReadSnapshot reads a snapshot written by WriteTo, to its end. Data that
// is not a snapshot, is truncated, fails its checksum, is inconsistent or
// has a version this package does not read gets an *Error with
// CodeInvalidArgument and Field "snapshot"; an error reading r is returned
// as it is.
func ReadSnapshot(r io.Reader) (*Snapshot, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	sn, err := decodeSnapshot(data)
	if err != nil {
		return nil, err
	}
	if err := sn.check(); err != nil {
		return nil, err
	}
	return sn, nil
}
