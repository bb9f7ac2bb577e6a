package replicated

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

func TestOpenRefusesBadConfig(t *testing.T) {
	_, tr := raft.NewInmemTransport("")
	defer func() { _ = tr.Close() }()
	good := Config{ID: "a", Dir: t.TempDir(), Transport: tr}
	notify := make(chan bool)
	badRaft := testRaftConfig()
	badRaft.HeartbeatTimeout = 1 // below raft's minimum
	for _, tt := range []struct {
		field string
		edit  func(*Config)
	}{
		{"ID", func(c *Config) { c.ID = "" }},
		{"Dir", func(c *Config) { c.Dir = "" }},
		{"Bind", func(c *Config) { c.Transport = nil }},
		{"Bootstrap", func(c *Config) { c.Bootstrap = []Server{{ID: "a"}} }},
		{"Bootstrap", func(c *Config) { c.Bootstrap = []Server{{ID: "b", Address: "x"}} }},
		{"Bootstrap", func(c *Config) { c.Bootstrap = []Server{{ID: "a", Address: "x"}, {ID: "a", Address: "y"}} }},
		{"Raft.NotifyCh", func(c *Config) { r := testRaftConfig(); r.NotifyCh = notify; c.Raft = r }},
		{"Raft", func(c *Config) { c.Raft = badRaft }},
		{"Options", func(c *Config) { c.Options = []lease.Option{lease.WithClock(lease.SystemClock())} }},
		{"Options.WithTTLBounds", func(c *Config) { c.Options = []lease.Option{lease.WithTTLBounds(time.Second, 0)} }},
		{"Options.WithClock", func(c *Config) { c.Options = []lease.Option{lease.WithClock(nil)} }},
	} {
		t.Run(tt.field, func(t *testing.T) {
			cfg := good
			tt.edit(&cfg)
			n, err := Open(context.Background(), cfg)
			require.Nil(t, n)
			var le *lease.Error
			require.ErrorAs(t, err, &le)
			assert.Equal(t, lease.CodeInvalidArgument, le.Code)
			assert.Equal(t, tt.field, le.Field)
		})
	}
	var nilCtx context.Context // the bad input under test
	_, err := Open(nilCtx, good)
	assert.Equal(t, lease.CodeInvalidArgument, lease.CodeOf(err))
}

func TestWritesReadsAndErrors(t *testing.T) {
	c := newCluster(t, clusterOpts{})
	ctx := ctxT(t)
	li := c.leader()
	ldr := c.nodes[li]
	fi := (li + 1) % 3
	fol := c.nodes[fi]

	l, err := ldr.GrantWithKey(ctx, "alice", lease.Operation, time.Minute, "job/1", []byte("v1"))
	require.NoError(t, err)
	assert.Equal(t, lease.ID(1), l.ID)
	assert.Equal(t, []string{"job/1"}, l.Keys)
	assert.WithinDuration(t, time.Now(), l.GrantedAt, time.Second, "the lease carries the leader's time")
	assert.Equal(t, l.GrantedAt.Add(time.Minute), l.ExpiresAt)

	require.NoError(t, ldr.Put(ctx, "job/2", []byte("v2"), l.ID))
	v, id, ok, err := ldr.Get(ctx, "job/2")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, []byte("v2"), v)
	assert.Equal(t, l.ID, id)

	_, err = ldr.GrantWithKey(ctx, "bob", lease.Operation, time.Minute, "job/1", nil)
	var le *lease.Error
	require.ErrorAs(t, err, &le, "a failed command's error is the service's")
	assert.Equal(t, lease.CodeKeyExists, le.Code)
	assert.Equal(t, l.ID, le.LeaseID)
	_, err = ldr.Renew(ctx, 99)
	assert.ErrorIs(t, err, lease.ErrNotFound)
	_, err = ldr.Grant(ctx, "", lease.Operation, time.Minute)
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "holder", le.Field)

	// A write or a linearizable read on a follower names the leader (once
	// it has heard from it).
	c.caughtUp(fi, li)
	_, err = fol.Grant(ctx, "carol", lease.Operation, time.Minute)
	var nle *NotLeaderError
	require.ErrorAs(t, err, &nle)
	require.ErrorIs(t, err, ErrNotLeader)
	assert.Equal(t, "grant", nle.Op)
	assert.Equal(t, c.cfgs[li].ID, nle.LeaderID)
	assert.Equal(t, c.cfgs[li].Bootstrap[li].Address, nle.LeaderAddress)
	_, err = fol.Info(ctx, l.ID)
	require.ErrorIs(t, err, ErrNotLeader)
	lid, laddr := fol.Leader()
	assert.Equal(t, nle.LeaderID, lid)
	assert.Equal(t, nle.LeaderAddress, laddr)

	// A stale read on a follower sees what it has applied.
	got, err := fol.Stale().Info(ctx, l.ID)
	require.NoError(t, err)
	assert.Equal(t, l.ExpiresAt, got.ExpiresAt)
	assert.Equal(t, []string{"job/1", "job/2"}, got.Keys)

	r, err := ldr.RenewTTL(ctx, l.ID, 2*time.Minute)
	require.NoError(t, err)
	assert.Equal(t, r.RenewedAt.Add(2*time.Minute), r.ExpiresAt)
	assert.False(t, r.RenewedAt.Before(l.RenewedAt))

	deleted, err := ldr.Delete(ctx, "job/2")
	require.NoError(t, err)
	assert.True(t, deleted)
	rv, err := ldr.Revoke(ctx, l.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"job/1"}, rv.Keys)
	_, err = ldr.Renew(ctx, l.ID)
	assert.ErrorIs(t, err, lease.ErrAlreadyRevoked)
	list, err := ldr.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, list)

	var nilCtx context.Context // the bad input under test
	_, err = ldr.Grant(nilCtx, "x", lease.Operation, time.Minute)
	assert.Equal(t, "ctx", fieldOf(err))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = ldr.Grant(cancelled, "x", lease.Operation, time.Minute)
	assert.ErrorIs(t, err, context.Canceled)

	c.stop(fi)
	_, err = fol.Stale().Info(ctx, 1)
	assert.ErrorIs(t, err, lease.ErrClosed)
	_, err = fol.Grant(ctx, "x", lease.Operation, time.Minute)
	assert.ErrorIs(t, err, lease.ErrClosed)
	assert.NoError(t, fol.Close(), "Close is idempotent")
}

func fieldOf(err error) string {
	var le *lease.Error
	if errors.As(err, &le) {
		return le.Field
	}
	return ""
}

// Leases end at their deadline on every node, with their keys, and never
// before it.
func TestExpiryOnEveryNode(t *testing.T) {
	c := newCluster(t, clusterOpts{raft: patientRaft})
	ctx := ctxT(t)
	li := c.leader()
	var ends []*endings
	for _, n := range c.nodes {
		ends = append(ends, watchEnds(n))
	}
	l, err := c.nodes[li].GrantWithKey(ctx, "a", lease.Operation, 100*time.Millisecond, "k", []byte("v"))
	require.NoError(t, err)
	for i, e := range ends {
		got := e.next(t)
		assert.Equal(t, l.ID, got.l.ID)
		assert.Equal(t, lease.EndExpired, got.reason)
		assert.Equal(t, []string{"k"}, got.l.Keys, "the key goes with the lease")
		assert.False(t, got.at.Before(l.ExpiresAt), "node %d ended the lease early", i)
		_, _, ok, err := c.nodes[i].Stale().Get(ctx, "k")
		require.NoError(t, err)
		assert.False(t, ok)
	}
	_, err = c.nodes[li].Renew(ctx, l.ID)
	assert.ErrorIs(t, err, lease.ErrExpired)
	for _, e := range ends {
		e.stop()
	}
}

// An Open that fails half way leaves nothing running.
func TestOpenFailureLeavesNothingRunning(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err := Open(context.Background(), Config{ID: "a", Dir: file, Bind: "127.0.0.1:0", Insecure: true})
	require.Error(t, err, "Dir is a file")
	_, err = Open(context.Background(), Config{ID: "a", Dir: t.TempDir(), Bind: "no-such-host.invalid:http", Insecure: true})
	require.Error(t, err, "the transport cannot listen")
}

// A stale read serves what the node has applied, which may be behind the
// leader; a linearizable read on the leader sees every acknowledged write.
func TestStaleReadMayLagLinearizableDoesNot(t *testing.T) {
	c := newCluster(t, clusterOpts{})
	ctx := ctxT(t)
	li := c.leader()
	fi := (li + 1) % 3
	c.disconnect(fi)
	l, err := c.nodes[li].GrantWithKey(ctx, "a", lease.Operation, time.Minute, "k", []byte("v"))
	require.NoError(t, err)

	_, _, ok, err := c.nodes[fi].Stale().Get(ctx, "k")
	require.NoError(t, err)
	assert.False(t, ok, "the cut-off follower has not seen the write")
	_, err = c.nodes[fi].Stale().Info(ctx, l.ID)
	assert.ErrorIs(t, err, lease.ErrNotFound)

	_, id, ok, err := c.nodes[li].Get(ctx, "k")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, l.ID, id)

	c.reconnect(fi)
	c.caughtUp(fi, li)
	_, id, ok, err = c.nodes[fi].Stale().Get(ctx, "k")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, l.ID, id)
}

// Every OnEnd subscriber sees an ending even when another panics, the
// panic is raised again for the service to report, and a stopped
// subscriber sees nothing more.
func TestOnEndSubscribers(t *testing.T) {
	n := &Node{}
	var got []string
	stopA := n.OnEnd(func(l lease.Lease, r lease.EndReason) {
		l.Keys[0] = "changed" // its own copy
		panic("a")
	})
	n.OnEnd(func(l lease.Lease, r lease.EndReason) { got = append(got, l.Keys[0]+" "+r.String()) })
	l := lease.Lease{ID: 1, Keys: []string{"k"}}
	assert.PanicsWithValue(t, "a", func() { n.dispatchEnd(l, lease.EndExpired) })
	assert.Equal(t, []string{"k expired"}, got)
	stopA()
	stopA()
	assert.NotPanics(t, func() { n.dispatchEnd(l, lease.EndRevoked) })
	assert.Equal(t, []string{"k expired", "k revoked"}, got)
	stopNil := n.OnEnd(nil) // subscribes nothing
	assert.NotPanics(t, func() { n.dispatchEnd(l, lease.EndRevoked) })
	assert.Equal(t, []string{"k expired", "k revoked", "k revoked"}, got)
	stopNil()
}

func TestNotLeaderErrorText(t *testing.T) {
	assert.Equal(t, "replicated: grant: not the leader, and no leader is known", (&NotLeaderError{Op: "grant"}).Error())
	assert.Equal(t, "replicated: put: not the leader; the leader is n1 at host1:7000",
		(&NotLeaderError{Op: "put", LeaderID: "n1", LeaderAddress: "host1:7000"}).Error())
	assert.NotErrorIs(t, errors.New("x"), ErrNotLeader)
}
