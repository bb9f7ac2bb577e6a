package replicated

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// memSink is a raft.SnapshotSink in memory.
type memSink struct {
	bytes.Buffer
	cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
func (s *memSink) Close() error  { return nil }

func applyAt(f *fsm, index uint64, stamp time.Time, cmds ...command) []result {
	data := encodeEntry(nil, stamp.UnixNano(), cmds)
	r, _ := f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: data}).([]result)
	return r
}

// A restored FSM holds exactly the state of the snapshot, at its instant,
// and goes on ending leases at their expiries.
func TestFSMSnapshotRestoresExactly(t *testing.T) {
	a := newFSM(nil, func(lease.Lease, lease.EndReason) {}, func() {})
	defer a.close()
	t0 := time.Unix(1_000, 0)
	res := applyAt(a, 1, t0,
		command{op: opGrantWithKey, holder: "a", purpose: lease.Operation, ttl: 10 * time.Second, key: "ka", value: []byte("va")},
		command{op: opGrant, holder: "b", purpose: lease.StateWrite, ttl: 5 * time.Second},
		command{op: opGrant, holder: "c", purpose: lease.Operation, ttl: time.Second},
	)
	require.Len(t, res, 3)
	for _, r := range res {
		require.NoError(t, r.err)
	}
	applyAt(a, 2, t0.Add(2*time.Second), command{op: opRevoke, id: res[1].lease.ID}) // c expires on the way

	snap, err := a.Snapshot()
	require.NoError(t, err)
	var sink memSink
	require.NoError(t, snap.Persist(&sink))
	snap.Release()
	require.False(t, sink.cancelled)

	var ended []lease.ID
	b := newFSM(nil, func(l lease.Lease, _ lease.EndReason) { ended = append(ended, l.ID) }, func() {})
	defer b.close()
	require.NoError(t, b.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	assert.Equal(t, a.now(), b.now(), "the log clock resumes at the snapshot's instant")
	assert.Equal(t, uint64(2), b.applied)
	ctx := t.Context()
	before, err := a.state.Load().svc.List(ctx)
	require.NoError(t, err)
	after, err := b.state.Load().svc.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	_, err = b.state.Load().svc.Info(ctx, res[1].lease.ID)
	assert.ErrorIs(t, err, lease.ErrAlreadyRevoked)
	_, err = b.state.Load().svc.Info(ctx, res[2].lease.ID)
	assert.ErrorIs(t, err, lease.ErrExpired)
	due, ok := b.next()
	require.True(t, ok, "the restored service armed its expiry on the new clock")
	assert.Equal(t, res[0].lease.ExpiresAt, due)

	applyAt(b, 3, t0.Add(10*time.Second))
	assert.Equal(t, []lease.ID{res[0].lease.ID}, ended)
	_, _, found, err := b.state.Load().svc.Get(ctx, "ka")
	require.NoError(t, err)
	assert.False(t, found)

	require.Error(t, b.Restore(io.NopCloser(bytes.NewReader([]byte("not a snapshot")))))
	require.Error(t, b.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()[:headerLen+3]))))
}

// A follower that fell behind the leader's log is sent a snapshot, and
// carries on from it: same leases and keys, ending on time.
func TestLaggingFollowerInstallsSnapshot(t *testing.T) {
	for _, stores := range []storeKind{memStores, boltStores} {
		t.Run(fmt.Sprint(map[storeKind]string{memStores: "inmem", boltStores: "bolt"}[stores]), func(t *testing.T) {
			testInstallSnapshot(t, stores)
		})
	}
}

func testInstallSnapshot(t *testing.T, stores storeKind) {
	c := newCluster(t, clusterOpts{stores: stores, raft: func(rc *raft.Config) {
		patientRaft(rc)
		rc.SnapshotThreshold = 8
		rc.TrailingLogs = 2
		rc.SnapshotInterval = 50 * time.Millisecond
	}})
	ctx := ctxT(t)
	li := c.leader()
	fi := (li + 1) % 3
	c.disconnect(fi)
	ldr := c.nodes[li]
	// The follower is cut off, but a majority remains.
	var last lease.Lease
	for i := range 30 {
		l, err := ldr.GrantWithKey(ctx, "h", lease.Operation, time.Minute, fmt.Sprintf("k%d", i), []byte{byte(i)})
		require.NoError(t, err)
		if i%3 == 0 {
			_, err = ldr.Revoke(ctx, l.ID)
			require.NoError(t, err)
		}
		last = l
	}
	soon, err := ldr.Grant(ctx, "soon", lease.Operation, 2*time.Second) // outlasts the catch-up
	require.NoError(t, err)
	require.NoError(t, ldr.Raft().Snapshot().Error())

	ends := watchEnds(c.nodes[fi])
	defer ends.stop()
	c.reconnect(fi)
	c.caughtUp(fi, li)
	fol := c.nodes[fi]
	assert.Equal(t, int64(1), fol.fsm.restores.Load(), "the follower installed a snapshot")

	want, err := ldr.List(ctx)
	require.NoError(t, err)
	got, err := fol.Stale().List(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	v, id, ok, err := fol.Stale().Get(ctx, last.Keys[0])
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, last.ID, id)
	assert.Equal(t, []byte{29}, v)

	e := ends.next(t)
	assert.Equal(t, soon.ID, e.l.ID)
	assert.Equal(t, lease.EndExpired, e.reason)
	assert.False(t, e.at.Before(soon.ExpiresAt), "the restored follower ended the lease early")
}
