package replicated

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// claimState is the work queue every node applies the log to: a
// claim.Memory over a lease.Service of its own, both on the node's log
// clock. The Memory's behaviour is a function of the calls it gets and of
// its clock: item IDs and fencing tokens (its service's lease IDs) are
// counters, its delays and claim expiries are timers on the log clock,
// which run when the FSM advances it, and its service's ending
// notifications reach it on the FSM's goroutine, as only the FSM calls that
// service. So every node holds the same queues after the same entries.
// Reads (Lookup, List, Counts, Queues) may settle what is due by the log's
// instant from another goroutine; settling is idempotent and orders items
// by (time, ID) whoever does it, so it changes no outcome.
type claimState struct {
	svc *lease.Service
	mem *claim.Memory
}

// newClaimState makes an empty queue state on clock.
func newClaimState(clock *logClock) (*claimState, error) {
	svc, err := lease.New(lease.WithClock(clock))
	if err != nil {
		return nil, err
	}
	mem, err := claim.NewMemory(svc)
	if err != nil {
		_ = svc.Close()
		return nil, err
	}
	return &claimState{svc: svc, mem: mem}, nil
}

// close stops the Memory (its Notify channels close, so that waiting
// workers look again, at the state that replaces it) and its service.
func (c *claimState) close() {
	_ = c.mem.Close()
	_ = c.svc.Close()
}

// The claims section of a snapshot: the service's snapshot as
// lease.Snapshot.WriteTo writes it, prefixed by its length (uvarint),
// followed by the Memory's as claim.Memory.WriteSnapshot writes it.

// snapshot saves the queue state; called on the FSM's goroutine, so that
// the service and the Memory are saved at the same instant of the log.
func (c *claimState) snapshot() ([]byte, error) {
	sn, err := c.svc.Snapshot()
	if err != nil {
		return nil, err
	}
	var svcBuf bytes.Buffer
	if _, err := sn.WriteTo(&svcBuf); err != nil {
		return nil, err
	}
	out := bytes.NewBuffer(binary.AppendUvarint(nil, uint64(svcBuf.Len())))
	out.Write(svcBuf.Bytes())
	if err := c.mem.WriteSnapshot(out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// restoreClaimState rebuilds the queue state a snapshot's claims section
// holds, on clock (set to the snapshot's instant).
func restoreClaimState(data []byte, clock *logClock, lost func(claim.Ref, error)) (*claimState, error) {
	n, k := binary.Uvarint(data)
	if k <= 0 || n > uint64(len(data)-k) {
		return nil, errors.New("replicated: corrupt snapshot: claims section")
	}
	sn, err := lease.ReadSnapshot(bytes.NewReader(data[k : k+int(n)]))
	if err != nil {
		return nil, err
	}
	svc, err := lease.Restore(sn, lease.WithClock(clock))
	if err != nil {
		return nil, err
	}
	mem, err := claim.RestoreMemory(svc, bytes.NewReader(data[k+int(n):]), lost)
	if err != nil {
		_ = svc.Close()
		return nil, err
	}
	return &claimState{svc: svc, mem: mem}, nil
}

// apply runs one claim store call from the log on the Memory.
func (c *claimState) apply(data []byte, lost func(claim.Ref, error)) result {
	call, err := decodeClaimCall(data)
	if err != nil {
		return result{err: err}
	}
	rep, err := call.run(context.Background(), c.mem, lost)
	return result{claim: rep, err: err}
}

// lostHub hands the losses the FSM applies (claims whose lease ended, or
// whose item was cancelled) to the claim stores of this node, whose callers
// wait for them. It is safe for concurrent use.
type lostHub struct {
	mu   sync.Mutex
	subs map[*lostSub]struct{}
}

type lostSub struct{ fn func(claim.Ref, error) }

func (h *lostHub) subscribe(fn func(claim.Ref, error)) (stop func()) {
	s := &lostSub{fn: fn}
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[*lostSub]struct{}{}
	}
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.subs, s)
		h.mu.Unlock()
	}
}

// lost tells every subscriber; called by the Memory on the FSM's goroutine
// (or a reader's), with the Memory's lock held: subscribers only record.
func (h *lostHub) lost(r claim.Ref, cause error) {
	h.mu.Lock()
	subs := make([]*lostSub, 0, len(h.subs))
	for s := range h.subs {
		subs = append(subs, s)
	}
	h.mu.Unlock()
	for _, s := range subs {
		s.fn(r, cause)
	}
}

// maxSection bounds the claims section a snapshot may declare, so that a
// corrupt length is refused rather than allocated.
const maxSection = 1 << 40

// readSection reads a snapshot's claims section: its length, then itself.
func readSection(r *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil || n > maxSection {
		return nil, errors.New("replicated: corrupt snapshot: claims section")
	}
	buf := make([]byte, 0, min(n, 1<<20))
	b := bytes.NewBuffer(buf)
	if _, err := io.CopyN(b, r, int64(n)); err != nil {
		return nil, fmt.Errorf("replicated: reading snapshot: %w", err)
	}
	return b.Bytes(), nil
}
