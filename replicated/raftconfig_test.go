package replicated

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// refusedRaft are the raft settings a node cannot honour, each with an
// edit that sets it.
var refusedRaft = map[string]func(*raft.Config){
	"ProtocolVersion":          func(c *raft.Config) { c.ProtocolVersion = 2 },
	"LocalID":                  func(c *raft.Config) { c.LocalID = "someone-else" },
	"NotifyCh":                 func(c *raft.Config) { c.NotifyCh = make(chan bool) },
	"LogLevel":                 func(c *raft.Config) { c.LogLevel = "verbose" },
	"NoSnapshotRestoreOnStart": func(c *raft.Config) { c.NoSnapshotRestoreOnStart = true },
	"RestoreCommittedLogs":     func(c *raft.Config) { c.RestoreCommittedLogs = true },
}

// honouredRaft are the raft settings a node honours (or, for BatchApplyCh,
// sets itself), each with an edit that moves it off its default.
var honouredRaft = map[string]func(*raft.Config){
	"HeartbeatTimeout":   func(c *raft.Config) { c.HeartbeatTimeout, c.ElectionTimeout = 60*time.Millisecond, 60*time.Millisecond },
	"ElectionTimeout":    func(c *raft.Config) { c.ElectionTimeout = 70 * time.Millisecond },
	"CommitTimeout":      func(c *raft.Config) { c.CommitTimeout = 2 * time.Millisecond },
	"MaxAppendEntries":   func(c *raft.Config) { c.MaxAppendEntries = 16 },
	"BatchApplyCh":       func(c *raft.Config) { c.BatchApplyCh = false },
	"ShutdownOnRemove":   func(c *raft.Config) { c.ShutdownOnRemove = false },
	"TrailingLogs":       func(c *raft.Config) { c.TrailingLogs = 4 },
	"SnapshotInterval":   func(c *raft.Config) { c.SnapshotInterval = time.Second },
	"SnapshotThreshold":  func(c *raft.Config) { c.SnapshotThreshold = 4 },
	"LeaderLeaseTimeout": func(c *raft.Config) { c.LeaderLeaseTimeout = 40 * time.Millisecond },
	"LogOutput":          func(c *raft.Config) { c.Logger = nil; c.LogOutput = &bytes.Buffer{} },
	"Logger":             func(c *raft.Config) { c.Logger = hclog.NewNullLogger() },
	"PreVoteDisabled":    func(c *raft.Config) { c.PreVoteDisabled = true },
	"NoLegacyTelemetry":  func(c *raft.Config) { c.NoLegacyTelemetry = true },
}

// Every raft setting the node cannot honour is refused, naming it, and
// nothing is left open: the same directory opens afterwards.
func TestOpenRefusesRaftSettingsItCannotHonour(t *testing.T) {
	dir := t.TempDir()
	for field, edit := range refusedRaft {
		t.Run(field, func(t *testing.T) {
			cfg := singleConfig(dir, freeAddr(t))
			edit(cfg.Raft)
			requireOpenRefused(t, cfg, "Raft."+field)
		})
	}
	for field, edit := range honouredRaft {
		t.Run(field, func(t *testing.T) {
			cfg := singleConfig(dir, freeAddr(t))
			edit(cfg.Raft)
			n, err := Open(context.Background(), cfg)
			require.NoError(t, err)
			require.NoError(t, n.Close())
		})
	}
	// The node's own ID is what LocalID becomes anyway.
	cfg := singleConfig(dir, freeAddr(t))
	cfg.Raft.LocalID = raft.ServerID(cfg.ID)
	n, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, n.Close())
}

// The tables above name every field of raft.Config: a raft release that
// adds one fails here until the node decides what to do with it.
func TestEveryRaftSettingIsDecided(t *testing.T) {
	typ := reflect.TypeFor[raft.Config]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		_, refused := refusedRaft[f.Name]
		_, honoured := honouredRaft[f.Name]
		assert.True(t, refused != honoured, "raft.Config.%s is neither refused nor honoured, or both", f.Name)
	}
	for name := range refusedRaft {
		_, ok := typ.FieldByName(name)
		assert.True(t, ok, "raft.Config has no field %s", name)
	}
	for name := range honouredRaft {
		_, ok := typ.FieldByName(name)
		assert.True(t, ok, "raft.Config has no field %s", name)
	}
}

// Without a Logger, the node's logger writes to LogOutput at LogLevel,
// and at warnings and errors on stderr when both are empty.
func TestRaftLoggerHonoursLogLevelAndOutput(t *testing.T) {
	for _, tt := range []struct {
		level  string
		output bool
		want   hclog.Level
	}{
		{"", false, hclog.Warn},
		{"debug", false, hclog.Debug},
		{"ERROR", true, hclog.Error},
		{"", true, hclog.Info}, // raft's own default with an output
	} {
		t.Run(fmt.Sprintf("%q,%v", tt.level, tt.output), func(t *testing.T) {
			rc := raft.DefaultConfig()
			rc.LogLevel = tt.level
			var out bytes.Buffer
			if tt.output {
				rc.LogOutput = &out
			}
			got, err := raftConfig(&Config{ID: "a", Raft: rc})
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Logger.GetLevel())
			if tt.output {
				got.Logger.Error("written")
				assert.Contains(t, out.String(), "written")
			}
		})
	}
}

// A node restarted from a raft snapshot comes back with its leases and
// keys, and carries on issuing IDs after the last.
func TestRestartFromSnapshot(t *testing.T) {
	o := clusterOpts{stores: boltStores, transport: tcpTransport, raft: func(rc *raft.Config) {
		patientRaft(rc)
		rc.TrailingLogs = 0 // a snapshot compacts the whole log
	}}
	c := newCluster(t, o)
	ctx := ctxT(t)
	li := c.leader()
	var last lease.Lease
	for i := range 5 {
		l, err := c.nodes[li].GrantWithKey(ctx, "h", lease.Operation, time.Hour, fmt.Sprintf("k%d", i), []byte{byte(i)})
		require.NoError(t, err)
		last = l
	}
	want, err := c.nodes[li].List(ctx)
	require.NoError(t, err)
	for i := range c.nodes {
		c.caughtUp(i, li)
		require.NoError(t, c.nodes[i].Raft().Snapshot().Error())
	}
	for i := range c.nodes {
		c.stop(i)
	}
	for i := range c.nodes {
		c.start(i)
		assert.Equal(t, int64(1), c.nodes[i].fsm.restores.Load(), "node %d restored its snapshot", i)
	}
	li = c.leader()
	got, err := c.nodes[li].List(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	v, id, ok, err := c.nodes[li].Get(ctx, last.Keys[0])
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, last.ID, id)
	assert.Equal(t, []byte{4}, v)
	next, err := c.nodes[li].Grant(ctx, "h", lease.Operation, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, last.ID+1, next.ID)
}

// A node configured with no Raft logs only warnings and errors: raft's
// start, its election and the node's first commit write nothing at DEBUG
// or INFO to stderr.
func TestNilRaftLogsOnlyWarningsAndErrors(t *testing.T) {
	got, err := raftConfig(&Config{ID: "a"})
	require.NoError(t, err)
	assert.Equal(t, hclog.Warn, got.Logger.GetLevel())

	c := startChild(t, "defaults", helperDirs+"="+t.TempDir(), helperBinds+"="+freeAddr(t))
	c.ready(t)
	c.kill()
	out := c.stderr.String()
	for _, level := range []string{"[TRACE]", "[DEBUG]", "[INFO]"} {
		assert.NotContains(t, out, level, "stderr:\n%s", out)
	}
}
