package replicated

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/leasehold/lease"
)

// clockStart is where a fresh node's log clock starts. The first entry
// moves it to the leader's time; the service's internal times are relative
// to it.
var clockStart = time.Unix(0, 0).UTC()

// fsmState is the service a node applies the log to and the clock it
// reads. A snapshot restore replaces both at once.
type fsmState struct {
	svc    *lease.Service
	clock  *logClock
	claims *claimState // the work queue of the node's claim stores
}

// fsm applies the raft log to a lease.Service. raft calls Apply, ApplyBatch,
// Snapshot and Restore from one goroutine; reads load the current state
// from any goroutine.
type fsm struct {
	opts    []lease.Option
	onEnd   func(lease.Lease, lease.EndReason) // the node's ending dispatcher
	changed func()                             // the earliest deadline may have moved

	state    atomic.Pointer[fsmState]
	restores atomic.Int64 // snapshots restored
	lost     lostHub      // the claims the log takes back, for this node's claim stores

	mu        sync.Mutex
	applied   uint64        // last log index applied (commands and configurations)
	appliedCh chan struct{} // closed when applied moves; nil when nobody waits
	// proposals are the entries of commands this node proposed whose
	// outcome someone may still need, by key (see outcome.go); tracking
	// counts them, so that applying needs no lock when there are none.
	proposals map[string]*proposal
	tracking  atomic.Int64
}

func newFSM(opts []lease.Option, onEnd func(lease.Lease, lease.EndReason), changed func()) *fsm {
	f := &fsm{opts: opts, onEnd: onEnd, changed: changed}
	clock := newLogClock(clockStart, changed)
	svc, _ := f.newService(clock, nil) // New cannot fail: Open validated the options
	claims, _ := newClaimState(clock)  // nor can it with no options
	f.state.Store(&fsmState{svc: svc, clock: clock, claims: claims})
	return f
}

// newService makes the service for clock, empty or restored from sn.
func (f *fsm) newService(clock *logClock, sn *lease.Snapshot) (*lease.Service, error) {
	opts := append(slices.Clip(f.opts), lease.WithClock(clock))
	var svc *lease.Service
	var err error
	if sn == nil {
		svc, err = lease.New(opts...)
	} else {
		svc, err = lease.Restore(sn, opts...)
	}
	if err != nil {
		return nil, err
	}
	svc.OnEnd(f.onEnd)
	return svc, nil
}

// Apply implements raft.FSM.
func (f *fsm) Apply(l *raft.Log) any {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch implements raft.BatchingFSM: raft hands over every committed
// command and configuration entry it has ready at once.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	for i, l := range logs {
		if l.Type == raft.LogCommand {
			out[i] = f.applyEntry(l.Data)
		}
	}
	if f.tracking.Load() > 0 {
		f.mu.Lock()
		for i, l := range logs {
			if l.Type == raft.LogCommand && len(l.Extensions) > 0 {
				f.matchLocked(l.Extensions, out[i])
			}
		}
		f.mu.Unlock()
	}
	if len(logs) > 0 {
		f.setApplied(logs[len(logs)-1].Index)
	}
	return out
}

// applyEntry applies one entry: it moves the log clock to the entry's stamp
// (ending whatever is due by then) and applies its commands in order. It
// returns one result per command, or an error for an entry it cannot
// decode (which every node refuses alike).
func (f *fsm) applyEntry(data []byte) any {
	stamp, cmds, err := decodeEntry(data)
	if err != nil {
		return err
	}
	st := f.state.Load()
	st.clock.advance(time.Unix(0, stamp).UTC())
	if len(cmds) == 0 {
		return []result(nil)
	}
	ctx := context.Background()
	out := make([]result, len(cmds))
	for i := range cmds {
		if cmds[i].op == opClaim {
			out[i] = st.claims.apply(cmds[i].value, f.lost.lost)
			continue
		}
		out[i] = applyCommand(ctx, st.svc, &cmds[i])
	}
	return out
}

func applyCommand(ctx context.Context, svc *lease.Service, c *command) (r result) {
	switch c.op {
	case opGrant:
		r.lease, r.err = svc.Grant(ctx, c.holder, c.purpose, c.ttl)
	case opGrantWithKey:
		r.lease, r.err = svc.GrantWithKey(ctx, c.holder, c.purpose, c.ttl, c.key, c.value)
	case opRenew:
		r.lease, r.err = svc.Renew(ctx, c.id)
	case opRenewTTL:
		r.lease, r.err = svc.RenewTTL(ctx, c.id, c.ttl)
	case opRevoke:
		r.lease, r.err = svc.Revoke(ctx, c.id)
	case opPut:
		r.err = svc.Put(ctx, c.key, c.value, c.id)
	case opDelete:
		r.ok, r.err = svc.Delete(ctx, c.key)
	}
	return r
}

func (f *fsm) setApplied(index uint64) {
	f.mu.Lock()
	f.applied = index
	if f.appliedCh != nil {
		close(f.appliedCh)
		f.appliedCh = nil
	}
	f.mu.Unlock()
}

// waitApplied waits until the FSM has applied index.
func (f *fsm) waitApplied(ctx context.Context, op string, index uint64, closing <-chan struct{}) error {
	for {
		f.mu.Lock()
		if f.applied >= index {
			f.mu.Unlock()
			return nil
		}
		if f.appliedCh == nil {
			f.appliedCh = make(chan struct{})
		}
		ch := f.appliedCh
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-closing:
			return closedError(op)
		}
	}
}

// next returns the earliest deadline the service armed on the log clock.
func (f *fsm) next() (time.Time, bool) { return f.state.Load().clock.next() }

// now returns the log clock's instant: the last applied entry's.
func (f *fsm) now() time.Time { return f.state.Load().clock.Now() }

// The snapshot format: a header (magic, version, the last applied index);
// from version 2, the claims section's length (uvarint) and the section
// (see claimState.snapshot); then the service's snapshot as
// lease.Snapshot.WriteTo writes it. Version 1, with no claims section,
// restores with empty queues.
const (
	snapshotMagic   = "LSRS"
	snapshotVersion = 2
	headerLen       = len(snapshotMagic) + 1 + 8
)

// Snapshot implements raft.FSM: a copy of the service at the log's instant.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	st := f.state.Load()
	sn, err := st.svc.Snapshot()
	if err != nil {
		return nil, err
	}
	claims, err := st.claims.snapshot()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	applied := f.applied
	f.mu.Unlock()
	return &fsmSnapshot{sn: sn, claims: claims, applied: applied}, nil
}

// Restore implements raft.FSM: it replaces the node's service with one
// restored exactly as the snapshot recorded it (the log clock is set to the
// snapshot's instant first) and closes the old one.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer func() { _ = rc.Close() }()
	r := bufio.NewReader(rc)
	var hdr [headerLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return fmt.Errorf("replicated: reading snapshot header: %w", err)
	}
	version := hdr[len(snapshotMagic)]
	if string(hdr[:len(snapshotMagic)]) != snapshotMagic || version < 1 || version > snapshotVersion {
		return errors.New("replicated: not a snapshot of this package, or of an unknown version")
	}
	applied := binary.BigEndian.Uint64(hdr[len(snapshotMagic)+1:])
	var section []byte
	if version >= 2 {
		var err error
		if section, err = readSection(r); err != nil {
			return err
		}
	}
	sn, err := lease.ReadSnapshot(r)
	if err != nil {
		return err
	}
	clock := newLogClock(sn.At().UTC(), f.changed)
	svc, err := f.newService(clock, sn)
	if err != nil {
		return err
	}
	var claims *claimState
	if section == nil {
		claims, err = newClaimState(clock)
	} else {
		claims, err = restoreClaimState(section, clock, f.lost.lost)
	}
	if err != nil {
		_ = svc.Close()
		return err
	}
	old := f.state.Swap(&fsmState{svc: svc, clock: clock, claims: claims})
	_ = old.svc.Close()
	old.claims.close()
	f.restores.Add(1)
	f.setApplied(applied)
	f.changed()
	return nil
}

// close closes the current service.
func (f *fsm) close() {
	st := f.state.Load()
	_ = st.svc.Close()
	st.claims.close()
}

type fsmSnapshot struct {
	sn      *lease.Snapshot
	claims  []byte // the claims section
	applied uint64
}

// Persist implements raft.FSMSnapshot.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	var hdr [headerLen]byte
	copy(hdr[:], snapshotMagic)
	hdr[len(snapshotMagic)] = snapshotVersion
	binary.BigEndian.PutUint64(hdr[len(snapshotMagic)+1:], s.applied)
	w := bufio.NewWriter(sink)
	_, err := w.Write(hdr[:])
	if err == nil {
		_, err = w.Write(binary.AppendUvarint(nil, uint64(len(s.claims))))
	}
	if err == nil {
		_, err = w.Write(s.claims)
	}
	if err == nil {
		_, err = s.sn.WriteTo(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

// Release implements raft.FSMSnapshot.
func (s *fsmSnapshot) Release() {}
