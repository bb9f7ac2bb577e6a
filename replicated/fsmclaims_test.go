package replicated

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

func claimCmd(c claimCall) command { return command{op: opClaim, value: encodeClaimCall(&c)} }

// queueDoc is the FSM's queues as their snapshot document: equal documents
// are equal queues.
func queueDoc(t *testing.T, f *fsm) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, f.state.Load().claims.mem.WriteSnapshot(&buf))
	return buf.Bytes()
}

func persist(t *testing.T, f *fsm) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	require.NoError(t, err)
	var sink memSink
	require.NoError(t, snap.Persist(&sink))
	return sink.Bytes()
}

// randomClaimEntry is an entry of a few random claim store calls, or a
// tick, over two queues and the first items.
func randomClaimEntry(rng *rand.Rand, refs []claim.Ref) []command {
	var cmds []command
	for range rng.IntN(4) {
		q := []string{"a", "b"}[rng.IntN(2)]
		var ref claim.Ref
		if len(refs) > 0 {
			ref = refs[rng.IntN(len(refs))]
		}
		id := claim.ItemID(rng.IntN(30) + 1)
		switch rng.IntN(10) {
		case 0, 1:
			cmds = append(cmds, claimCmd(claimCall{Op: callEnqueue, Items: []claim.NewItem{{Queue: q, MaxAttempts: 2,
				Delay: time.Duration(rng.IntN(3)) * time.Second, Priority: rng.IntN(2), Key: fmt.Sprint(rng.IntN(40))}}}))
		case 2, 3:
			cmds = append(cmds, claimCmd(claimCall{Op: callClaim, Request: &claimRequest{Queue: q, Owner: "w", Limit: 1 + rng.IntN(3), Lease: time.Duration(1+rng.IntN(3)) * time.Second}}))
		case 4:
			cmds = append(cmds, claimCmd(claimCall{Op: callSettle, Settlement: &claim.Settlement{Ref: ref, How: claim.Settle(1 + rng.IntN(4)), After: time.Second, Reason: "r"}}))
		case 5:
			cmds = append(cmds, claimCmd(claimCall{Op: callExtend, Ref: ref, Lease: 2 * time.Second}))
		case 6:
			cmds = append(cmds, claimCmd(claimCall{Op: callCancel, Queue: q, ID: id}))
		case 7:
			cmds = append(cmds, claimCmd(claimCall{Op: callRequeueDead, Queue: q, ID: id}))
		case 8:
			cmds = append(cmds, claimCmd(claimCall{Op: []claimOp{callPause, callResume, callRetryNow, callDeleteDead}[rng.IntN(4)], Queue: q, ID: id}))
		case 9:
			cmds = append(cmds, claimCmd(claimCall{Op: callClean, Limit: 1 + rng.IntN(3)}))
		}
	}
	return cmds
}

// Every node ends with the same queues after the same entries, whatever
// reads run beside the applies, and a node restored from a snapshot midway
// goes on exactly as the others: the Memory is a function of the log.
func TestClaimStateIsAFunctionOfTheLog(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		nop := func(lease.Lease, lease.EndReason) {}
		a, b := newFSM(nil, nop, func() {}), newFSM(nil, nop, func() {})
		var c *fsm
		defer func() {
			a.close()
			b.close()
			if c != nil {
				c.close()
			}
		}()
		ret := claimCmd(claimCall{Op: callSetRetention, Retention: &claim.Retention{Completed: 3 * time.Second, Cancelled: time.Second, Dead: 5 * time.Second}})
		t0 := time.Unix(1_000, 0)
		applyAt(a, 1, t0, ret)
		applyAt(b, 1, t0, ret)

		// Reads on b settle what is due from another goroutine meanwhile.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				mem := b.state.Load().claims.mem
				_, _ = mem.List(context.Background(), claim.Query{Queue: "a", Limit: 100})
				_, _ = mem.Counts(context.Background(), "b")
			}
		})
		var refs []claim.Ref
		now := t0
		for i := uint64(2); i < 400; i++ {
			now = now.Add(time.Duration(rng.IntN(700)) * time.Millisecond)
			cmds := randomClaimEntry(rng, refs)
			ra, rb := applyAt(a, i, now, cmds...), applyAt(b, i, now, cmds...)
			var rc []result
			if c != nil {
				rc = applyAt(c, i, now, cmds...)
			}
			for j := range ra {
				require.Equal(t, ra[j].err, rb[j].err, "seed %d entry %d", seed, i)
				require.Equal(t, ra[j].claim, rb[j].claim, "seed %d entry %d", seed, i)
				if c != nil {
					require.Equal(t, ra[j].claim, rc[j].claim, "seed %d entry %d", seed, i)
				}
				if ra[j].claim != nil {
					for _, cl := range ra[j].claim.Claims {
						refs = append(refs, cl.Ref)
					}
				}
			}
			if i == 200 {
				c = newFSM(nil, nop, func() {})
				require.NoError(t, c.Restore(io.NopCloser(bytes.NewReader(persist(t, a)))))
			}
		}
		close(stop)
		wg.Wait()
		require.Equal(t, string(queueDoc(t, a)), string(queueDoc(t, b)), "seed %d", seed)
		require.Equal(t, string(queueDoc(t, a)), string(queueDoc(t, c)), "seed %d", seed)
	}
}

// A snapshot of version 1, written before the queues were in the log,
// restores with empty queues.
func TestFSMRestoresASnapshotWithoutQueues(t *testing.T) {
	a := newFSM(nil, func(lease.Lease, lease.EndReason) {}, func() {})
	defer a.close()
	res := applyAt(a, 1, time.Unix(1_000, 0), command{op: opGrant, holder: "a", purpose: lease.Operation, ttl: time.Minute})
	sn, err := a.state.Load().svc.Snapshot()
	require.NoError(t, err)
	var v1 bytes.Buffer
	v1.WriteString(snapshotMagic)
	v1.WriteByte(1)
	v1.Write(binary.BigEndian.AppendUint64(nil, 1))
	_, err = sn.WriteTo(&v1)
	require.NoError(t, err)

	b := newFSM(nil, func(lease.Lease, lease.EndReason) {}, func() {})
	defer b.close()
	require.NoError(t, b.Restore(io.NopCloser(&v1)))
	l, err := b.state.Load().svc.Info(t.Context(), res[0].lease.ID)
	require.NoError(t, err)
	require.Equal(t, "a", l.Holder)
	r := applyAt(b, 2, time.Unix(1_001, 0), claimCmd(claimCall{Op: callEnqueue, Items: []claim.NewItem{{Queue: "q", MaxAttempts: 1}}}))
	require.NoError(t, r[0].err)
	require.Equal(t, claim.ItemID(1), r[0].claim.Items[0].ID)
}

// A claim made before a snapshot keeps its token and expires on the
// restored node at its instant, taken back by a tick.
func TestFSMSnapshotCarriesClaims(t *testing.T) {
	a := newFSM(nil, func(lease.Lease, lease.EndReason) {}, func() {})
	defer a.close()
	t0 := time.Unix(1_000, 0)
	applyAt(a, 1, t0, claimCmd(claimCall{Op: callEnqueue, Items: []claim.NewItem{{Queue: "q", MaxAttempts: 2}, {Queue: "q", MaxAttempts: 2}}}))
	r := applyAt(a, 2, t0, claimCmd(claimCall{Op: callClaim, Request: &claimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: 5 * time.Second}}))
	require.Len(t, r[0].claim.Claims, 1)
	held := r[0].claim.Claims[0]

	b := newFSM(nil, func(lease.Lease, lease.EndReason) {}, func() {})
	defer b.close()
	var lost []claim.Ref
	defer b.lost.subscribe(func(r claim.Ref, _ error) { lost = append(lost, r) })()
	require.NoError(t, b.Restore(io.NopCloser(bytes.NewReader(persist(t, a)))))
	next, ok := b.next()
	require.True(t, ok)
	require.Equal(t, held.ExpiresAt, next, "the restored claim's expiry is armed on the log clock")
	applyAt(b, 3, held.ExpiresAt) // a tick
	require.Equal(t, []claim.Ref{held.Ref}, lost)
	r = applyAt(b, 4, held.ExpiresAt, claimCmd(claimCall{Op: callClaim, Request: &claimRequest{Queue: "q", Owner: "w", Limit: 2, Lease: 5 * time.Second}}))
	require.Len(t, r[0].claim.Claims, 2)
	for _, c := range r[0].claim.Claims {
		require.Greater(t, c.Ref.Token, held.Ref.Token)
	}
}

func TestClaimCommandRoundTrip(t *testing.T) {
	cmds := []command{claimCmd(claimCall{Op: callEnqueue, Items: []claim.NewItem{{Queue: "q", MaxAttempts: 1}}}), {op: opDelete, key: "x"}}
	stamp, got, err := decodeEntry(encodeEntry(nil, 3, cmds))
	require.NoError(t, err)
	require.Equal(t, int64(3), stamp)
	require.Equal(t, cmds, got)
	require.Equal(t, "claim store", opClaim.String())
}

// A call no node can read is refused by every node alike, changing
// nothing.
func TestFSMRefusesACorruptClaimCall(t *testing.T) {
	f := newFSM(nil, func(lease.Lease, lease.EndReason) {}, func() {})
	defer f.close()
	before := queueDoc(t, f)
	r := applyAt(f, 1, time.Unix(1_000, 0), command{op: opClaim, value: []byte("{")}, claimCmd(claimCall{Op: "steal"}),
		command{op: opClaim, value: []byte{9, 1, 0}})
	require.ErrorContains(t, r[0].err, "corrupt claim store call")
	require.ErrorIs(t, r[1].err, lease.ErrStorage, "an op with no code")
	require.ErrorContains(t, r[2].err, "unknown format 0x09")
	require.Equal(t, before, queueDoc(t, f))
}
