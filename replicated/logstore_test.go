package replicated

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

func openBolt(t *testing.T, dir string) *raftboltdb.BoltStore {
	t.Helper()
	b, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db"), BoltOptions: boltOptions()})
	require.NoError(t, err)
	return b
}

// A log left in raft.db, compacted so that it starts past index 1 and
// longer than one copy chunk, moves to the write-ahead log entry for
// entry, and raft.db keeps none of it; a copy a crash left half made is
// made again.
func TestOpenLogMovesTheLogOutOfBolt(t *testing.T) {
	dir := t.TempDir()
	old := openBolt(t, dir)
	defer func() { require.NoError(t, old.Close()) }()
	const first, last = 100, 100 + 2*migrateChunk + 7
	var logs []*raft.Log
	for i := uint64(first); i <= last; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 3, Type: raft.LogCommand, Data: []byte(strconv.FormatUint(i, 10))})
	}
	require.NoError(t, old.StoreLogs(logs))
	require.NoError(t, os.Mkdir(filepath.Join(dir, walDir+".tmp"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, walDir+".tmp", "junk"), []byte("half a copy"), 0o600))

	w, err := openLog(dir, old, hclog.NewNullLogger())
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Close()) }()
	fi, err := w.FirstIndex()
	require.NoError(t, err)
	li, err := w.LastIndex()
	require.NoError(t, err)
	assert.Equal(t, uint64(first), fi)
	assert.Equal(t, uint64(last), li)
	for i := uint64(first); i <= last; i++ {
		var l raft.Log
		require.NoError(t, w.GetLog(i, &l))
		assert.Equal(t, strconv.FormatUint(i, 10), string(l.Data))
		assert.Equal(t, uint64(3), l.Term)
	}
	require.NoError(t, w.DeleteRange(first, first+9))
	var l raft.Log
	require.ErrorIs(t, w.GetLog(first+9, &l), raft.ErrLogNotFound, "a deleted entry is gone")
	require.NoError(t, w.GetLog(first+10, &l))
	bl, err := old.LastIndex()
	require.NoError(t, err)
	assert.Zero(t, bl, "raft.db keeps no entry")
	_, err = os.Stat(filepath.Join(dir, walDir+".tmp"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// A cluster whose directories an earlier release wrote, with the log in
// raft.db, comes up from them with every lease and key it had.
func TestClusterOpensDirectoriesWithTheLogInBolt(t *testing.T) {
	var dirs, binds []string
	for range 3 {
		dirs, binds = append(dirs, t.TempDir()), append(binds, freeAddr(t))
	}
	o := clusterOpts{stores: boltStores, transport: tcpTransport, raft: patientRaft, dirs: dirs, binds: binds}
	c := newCluster(t, o)
	ctx := ctxT(t)
	li := c.leader()
	granted := make(map[lease.ID]lease.Lease)
	for i := range 20 {
		key := "k" + strconv.Itoa(i)
		l, err := c.nodes[li].GrantWithKey(ctx, "h", lease.Operation, time.Minute, key, []byte(key))
		require.NoError(t, err)
		granted[l.ID] = l
	}
	c.close()

	// Put each node's log back where an earlier release kept it.
	for _, dir := range dirs {
		w, err := openWAL(filepath.Join(dir, walDir), hclog.NewNullLogger())
		require.NoError(t, err)
		b := openBolt(t, dir)
		require.NoError(t, copyLogs(b, w))
		require.NoError(t, errors.Join(w.Close(), b.Close()))
		require.NoError(t, os.RemoveAll(filepath.Join(dir, walDir)))
	}

	c = newCluster(t, o)
	li = c.leader()
	list, err := c.nodes[li].List(ctx)
	require.NoError(t, err)
	require.Len(t, list, len(granted))
	for _, l := range list {
		want := granted[l.ID]
		assert.Equal(t, want.ExpiresAt, l.ExpiresAt)
		assert.Equal(t, want.Keys, l.Keys)
	}
	_, err = c.nodes[li].Renew(ctx, list[0].ID)
	require.NoError(t, err, "the cluster commits on the moved log")
}

// grantOnSolo opens a one-node cluster on dir and bind, grants count
// leases, each with a key holding a value of size bytes when size is not
// 0, closes the node and returns the leases' IDs.
func grantOnSolo(t *testing.T, dir, bind string, count, size int) []lease.ID {
	t.Helper()
	ctx := ctxT(t)
	n, err := Open(ctx, singleConfig(dir, bind))
	require.NoError(t, err)
	require.NoError(t, n.Ready(ctx))
	var ids []lease.ID
	for i := range count {
		var l lease.Lease
		if size == 0 {
			l, err = n.Grant(ctx, "h", lease.Operation, time.Hour)
		} else {
			l, err = n.GrantWithKey(ctx, "h", lease.Operation, time.Hour, "k"+strconv.Itoa(i), make([]byte, size))
		}
		require.NoError(t, err)
		ids = append(ids, l.ID)
	}
	require.NoError(t, n.Close())
	return ids
}

// A node whose process is killed after raft cut a suffix off its log (as
// on a follower whose uncommitted entries a new leader overwrites) opens
// again with every lease it had.
func TestOpenAfterSuffixTruncationAndKill(t *testing.T) {
	dir, bind := t.TempDir(), freeAddr(t)
	ctx := ctxT(t)
	ids := grantOnSolo(t, dir, bind, 5, 0)

	c := startChild(t, "truncate", helperDirs+"="+dir)
	c.ready(t)
	c.kill()

	n, err := Open(ctx, singleConfig(dir, bind))
	require.NoError(t, err)
	defer func() { require.NoError(t, n.Close()) }()
	require.NoError(t, n.Ready(ctx))
	for _, id := range ids {
		_, err := n.Renew(ctx, id)
		require.NoError(t, err, "lease %d survives", id)
	}
}

// A write-ahead log closed in this process opens again at once: its Close
// also closed its metadata store and let go of that store's file lock.
func TestWALCloseReleasesItsMetadata(t *testing.T) {
	dir := t.TempDir()
	w, err := openWAL(dir, hclog.NewNullLogger())
	require.NoError(t, err)
	require.NoError(t, w.StoreLogs([]*raft.Log{{Index: 1, Term: 1, Type: raft.LogCommand, Data: []byte("x")}}))
	require.NoError(t, w.Close())
	opened := make(chan error, 1)
	go func() {
		w, err := openWAL(dir, hclog.NewNullLogger())
		if err == nil {
			err = w.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		require.NoError(t, err)
	case <-time.After(waitLimit):
		t.Fatal("the log's metadata store is still locked after Close")
	}
}

// A node whose log has an entry raft cannot read (a damaged frame in a
// sealed segment, which raft reads as it starts and panics on) does not
// open: Open returns a storage error naming the directory, and the
// process goes on.
func TestOpenDamagedLogIsAStorageError(t *testing.T) {
	dir, bind := t.TempDir(), freeAddr(t)
	ctx := ctxT(t)
	grantOnSolo(t, dir, bind, 40, 512)

	// Lay the log out again in small segments, so that its first entries
	// are in a sealed one, and damage the first entry's frame there.
	path := filepath.Join(dir, walDir)
	w, err := openWAL(path, hclog.NewNullLogger())
	require.NoError(t, err)
	var logs []*raft.Log
	first, last, err := logRange(w)
	require.NoError(t, err)
	for i := first; i <= last; i++ {
		l := new(raft.Log)
		require.NoError(t, w.GetLog(i, l))
		logs = append(logs, l)
	}
	require.NoError(t, w.Close())
	require.NoError(t, os.RemoveAll(path))
	require.NoError(t, os.Mkdir(path, 0o700))
	meta := &metadb.BoltMetaDB{}
	small, err := wal.Open(path, wal.WithMetaStore(meta), wal.WithSegmentSize(8<<10))
	require.NoError(t, err)
	for _, l := range logs {
		require.NoError(t, small.StoreLogs([]*raft.Log{l}))
	}
	require.NoError(t, small.Close())
	segs, err := filepath.Glob(filepath.Join(path, "*.wal"))
	require.NoError(t, err)
	require.Greater(t, len(segs), 1, "the log spans several segments")
	f, err := os.OpenFile(segs[0], os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0x7f}, 32) // the type of the first frame, after the file header
	require.NoError(t, errors.Join(err, f.Close()))

	_, err = Open(ctx, singleConfig(dir, bind))
	require.Error(t, err)
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, lease.CodeStorage, le.Code)
	assert.Equal(t, "replicated", le.Package)
	assert.Contains(t, err.Error(), dir)
	require.ErrorIs(t, err, lease.ErrStorage)

	// The directory is free again: the failed Open closed what it opened.
	require.NoError(t, os.RemoveAll(dir))
	n, err := Open(ctx, singleConfig(dir, bind))
	require.NoError(t, err)
	require.NoError(t, n.Close())
}
