package claim

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/leasehold/lease"
)

// A Memory's snapshot is one JSON document: the counters, the retention,
// the paused queues, every item with its claim, and the orders the Memory
// keeps that its heaps do not rebuild (dead letters per queue, finished
// items per state), so that a restored Memory answers every later call as
// the saved one would have. Times are absolute, in Unix nanoseconds: the
// restored Memory has an epoch of its own.

// memorySnapshotVersion is the version of the snapshot document.
const memorySnapshotVersion = 1

type memorySnapshot struct {
	Version   int
	LastID    ItemID
	Retention Retention
	Paused    map[string]int64 // queue: when paused
	Items     []snapshotItem   // in ID order
	Dead      map[string][]ItemID
	Kept      [3][]ItemID // completed, cancelled, dead: in the order kept
}

type snapshotItem struct {
	ID        ItemID
	Queue     string
	Kind      string    `json:",omitempty"`
	Tags      []string  `json:",omitempty"`
	Metadata  []byte    `json:",omitempty"`
	Key       string    `json:",omitempty"`
	Payload   []byte    `json:",omitempty"`
	Nils      uint8     `json:",omitempty"` // which of Tags, Metadata, Payload are nil (1, 2, 4)
	State     State     // never 0: a Memory holds no item between states
	Priority  uint8     `json:",omitempty"`
	Attempts  int       `json:",omitempty"`
	Max       int       //
	Timeout   int64     `json:",omitempty"`
	Enqueued  int64     //
	VisibleAt int64     `json:",omitempty"`
	DeadAt    int64     `json:",omitempty"`
	Finished  int64     `json:",omitempty"`
	History   []Failure `json:",omitempty"`
	// The live claim of a Claimed item.
	Lease   lease.ID `json:",omitempty"`
	Owner   string   `json:",omitempty"`
	Attempt int      `json:",omitempty"`
	Expires int64    `json:",omitempty"`
}

// WriteSnapshot writes the Memory's items, claims, paused queues and
// retention to w, for RestoreMemory. The claims are leases of the Memory's
// service, which the snapshot does not hold: save the service with it (a
// lease.Snapshot taken with nothing changing either in between), as the
// restored claims name those leases. Calls under way on claims (an Extend
// or Settle waiting for the service) must not be, as their outcome would
// be lost: the caller that serialises every call of the Memory arranges
// that. A closed Memory gets an error matching lease.ErrClosed.
func (m *Memory) WriteSnapshot(w io.Writer) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return closedError("snapshot")
	}
	sn := m.snapshotLocked()
	m.mu.Unlock()
	return json.NewEncoder(w).Encode(sn)
}

func (m *Memory) snapshotLocked() *memorySnapshot {
	abs := func(n int64) int64 { return m.at(n).UnixNano() }
	sn := &memorySnapshot{Version: memorySnapshotVersion, LastID: m.lastID, Retention: m.retention,
		Paused: make(map[string]int64, len(m.paused)), Dead: map[string][]ItemID{}}
	for name, at := range m.paused {
		sn.Paused[name] = abs(at)
	}
	// The items are put in ID order as pointers, which sort much faster
	// than the records, into a slice sized once: a million items must
	// not hold the caller (the replica's state machine) for seconds.
	its := make([]*item, 0, m.items.Len())
	m.items.Each(func(it *item) bool {
		its = append(its, it)
		return true
	})
	if !slices.IsSortedFunc(its, func(a, b *item) int { return cmpID(a.id, b.id) }) {
		slices.SortFunc(its, func(a, b *item) int { return cmpID(a.id, b.id) })
	}
	sn.Items = make([]snapshotItem, len(its))
	for i, it := range its {
		x := &sn.Items[i]
		*x = snapshotItem{ID: it.id, Queue: it.qs.name, Kind: it.kind, Tags: it.tags, Metadata: it.metadata,
			Key: it.key, Payload: it.payload, State: it.state, Priority: it.priority, Attempts: it.attempts,
			Max: it.max, Timeout: int64(it.timeout), Enqueued: abs(it.enqueued), History: it.history}
		if it.tags == nil {
			x.Nils |= 1
		}
		if it.metadata == nil {
			x.Nils |= 2
		}
		if it.payload == nil {
			x.Nils |= 4
		}
		switch it.state {
		case Visible, Delayed:
			x.VisibleAt = abs(it.visibleAt)
		case Dead:
			x.DeadAt = abs(it.deadAt)
		case Completed, Cancelled:
			x.Finished = abs(it.finished)
		case Claimed:
			h := it.hold
			x.Lease, x.Owner, x.Attempt, x.Expires = h.lease, h.owner, h.attempt, abs(h.expires)
		}
	}
	for name, qs := range m.queues.m {
		if len(qs.dead) > 0 {
			for _, it := range qs.dead {
				sn.Dead[name] = append(sn.Dead[name], it.id)
			}
		}
	}
	for i := range m.kept {
		m.kept[i].each(func(it *item) { sn.Kept[i] = append(sn.Kept[i], it.id) })
	}
	return sn
}

func cmpID(a, b ItemID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// RestoreMemory returns a Memory holding what WriteSnapshot wrote to r,
// with svc, restored from the snapshot of the service saved with it, as
// its service (see NewMemory): the restored claims are the same leases of
// svc, with the same fencing tokens. A function cannot be saved, so every
// restored claim gets lost as its ClaimRequest.Lost (nil for none). Claims
// whose lease svc no longer holds, or whose expiry has passed on svc's
// clock, are taken back as the Memory takes back any expired claim. A nil
// svc gets a *lease.Error with Code lease.CodeInvalidArgument naming svc;
// a document RestoreMemory cannot read, one naming items it does not
// hold, or one of an unknown version, a *lease.Error with Code
// lease.CodeInvalidArgument naming snapshot.
func RestoreMemory(svc *lease.Service, r io.Reader, lost func(Ref, error)) (*Memory, error) {
	const op = "RestoreMemory"
	if svc == nil {
		return nil, invalid(op, "svc", "service must not be nil")
	}
	var sn memorySnapshot
	if err := json.NewDecoder(r).Decode(&sn); err != nil {
		return nil, invalid(op, "snapshot", "unreadable: "+err.Error())
	}
	if sn.Version != memorySnapshotVersion {
		return nil, invalid(op, "snapshot", fmt.Sprintf("unknown version %d", sn.Version))
	}
	m, err := NewMemory(svc)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	err = m.restoreLocked(&sn, lost)
	if err == nil {
		m.settle(m.now())
	}
	m.unlock()
	if err != nil {
		_ = m.Close()
		return nil, invalid(op, "snapshot", err.Error())
	}
	return m, nil
}

func (m *Memory) restoreLocked(sn *memorySnapshot, lost func(Ref, error)) error {
	rel := func(n int64) int64 { return m.nanos(time.Unix(0, n)) }
	m.lastID, m.retention = sn.LastID, sn.Retention
	if len(sn.Paused) > 0 {
		m.paused = make(map[string]int64, len(sn.Paused))
		for name, at := range sn.Paused {
			m.paused[name] = rel(at)
		}
	}
	for i := range sn.Items {
		x := &sn.Items[i]
		if x.ID == 0 || x.ID > sn.LastID || m.lookup(x.ID) != nil {
			return fmt.Errorf("item %d: ID out of place", x.ID)
		}
		it := &item{id: x.ID, qs: m.queue(x.Queue), kind: x.Kind, tags: x.Tags, metadata: x.Metadata, key: x.Key,
			payload: x.Payload, state: x.State, priority: x.Priority, attempts: x.Attempts, max: x.Max,
			timeout: time.Duration(x.Timeout), enqueued: rel(x.Enqueued), index: -1, history: x.History}
		if x.Nils&1 == 0 && it.tags == nil {
			it.tags = []string{}
		}
		if x.Nils&2 == 0 && it.metadata == nil {
			it.metadata = []byte{}
		}
		if x.Nils&4 == 0 && it.payload == nil {
			it.payload = []byte{}
		}
		m.items.Put(uint64(it.id), it)
		if it.key != "" {
			m.keys.put(queueKey{x.Queue, it.key}, it)
		}
		qs := it.qs
		switch it.state {
		case Visible:
			it.visibleAt = rel(x.VisibleAt)
			qs.push(it.visibleAt, it)
		case Delayed:
			it.visibleAt = rel(x.VisibleAt)
			qs.delayed++
			m.delayed.push(it.visibleAt, it)
		case Claimed:
			h := &hold{item: it, lease: x.Lease, owner: x.Owner, attempt: x.Attempt, expires: rel(x.Expires), lost: lost}
			if h.lease == 0 {
				return fmt.Errorf("item %d: claimed without a lease", x.ID)
			}
			it.hold = h
			qs.claimed++
			m.byLease.put(h.lease, h)
			m.claims.push(h.expires, it)
		case Dead:
			it.deadAt = rel(x.DeadAt)
		case Completed:
			it.finished = rel(x.Finished)
			qs.completed++
		case Cancelled:
			it.finished = rel(x.Finished)
			qs.cancelled++
		default:
			return fmt.Errorf("item %d: unknown state %d", x.ID, x.State)
		}
	}
	for _, name := range sortedKeys(sn.Dead) {
		for _, id := range sn.Dead[name] {
			it := m.lookup(id)
			if it == nil || it.state != Dead || it.qs.name != name || it.index >= 0 {
				return fmt.Errorf("dead letter %d of %q: no such dead item", id, name)
			}
			it.qs.addDead(it)
		}
	}
	for i, ids := range sn.Kept {
		q := &m.kept[i]
		for _, id := range ids {
			it := m.lookup(id)
			if it == nil || it.state != q.state {
				return fmt.Errorf("kept item %d: not %s", id, q.state)
			}
			at := it.finished
			if it.state == Dead {
				at = it.deadAt
			}
			q.push(it, at)
		}
	}
	var missing []string
	m.items.Each(func(it *item) bool {
		if it.state == Dead && it.index < 0 {
			missing = append(missing, fmt.Sprint(it.id))
		}
		return true
	})
	if len(missing) > 0 {
		return fmt.Errorf("dead items %s in no queue's dead letters", strings.Join(missing, ", "))
	}
	return nil
}

func sortedKeys[V any](mp map[string]V) []string {
	keys := make([]string, 0, len(mp))
	for k := range mp {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
