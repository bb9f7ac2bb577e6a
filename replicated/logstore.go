package replicated

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
)

// The node's raft log is a write-ahead log in Dir/wal (hashicorp/raft-wal):
// appending a batch of entries is one write and one fsync, where a bolt
// transaction rewrites B+tree pages and syncs twice. Every commit waits for
// an append on the leader and then on a follower, so the log's append is
// most of a renewal's latency. raft.db (bolt) keeps raft's term and vote
// and holds the directory's lock.

// walDir is the log's directory inside a node's Dir.
const walDir = "wal"

// openLog opens the node's log in dir. A directory a node of an earlier
// release wrote keeps its log in old, bolt's raft.db: the entries are
// copied to a new log first, made under another name and renamed into
// place once complete, so that a crash midway leaves the old log in force
// and the copy is made again at the next open; then they are deleted from
// old.
func openLog(dir string, old *raftboltdb.BoltStore, logger hclog.Logger) (*walLog, error) {
	path := filepath.Join(dir, walDir)
	_, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := migrateLog(dir, old, logger); err != nil {
			return nil, fmt.Errorf("moving the log from raft.db to %s: %w", walDir, err)
		}
	case err != nil:
		return nil, err
	}
	if err := dropLogs(old); err != nil {
		return nil, fmt.Errorf("deleting the log moved from raft.db: %w", err)
	}
	return openWAL(path, logger)
}

// walLog is a raft-wal log that hides the entries a head truncation
// deleted (see GetLog).
type walLog struct {
	*wal.WAL
}

// openWAL opens the write-ahead log in dir. Its metadata store is closed
// with it.
func openWAL(dir string, logger hclog.Logger) (*walLog, error) {
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(dir, wal.WithLogger(logger), wal.WithMetaStore(meta))
	if err != nil {
		return nil, errors.Join(err, meta.Close())
	}
	return &walLog{WAL: w}, nil
}

// GetLog implements raft.LogStore. wal.WAL answers for entries a head
// truncation deleted (they stay in their segment until it is dropped
// whole); raft must not see them, or it would send a follower entries
// instead of the snapshot that replaced them.
func (l *walLog) GetLog(index uint64, log *raft.Log) error {
	first, err := l.WAL.FirstIndex()
	if err != nil {
		return err
	}
	if index < first {
		return raft.ErrLogNotFound
	}
	return l.WAL.GetLog(index, log)
}

// migrateLog makes dir/wal, with a copy of old's entries if it has any.
func migrateLog(dir string, old raft.LogStore, logger hclog.Logger) error {
	tmp := filepath.Join(dir, walDir+".tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	w, err := openWAL(tmp, logger)
	if err != nil {
		return err
	}
	err = copyLogs(w, old)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, walDir)); err != nil {
		return err
	}
	return syncDir(dir)
}

// migrateChunk is how many entries migrateLog copies at a time.
const migrateChunk = 256

// copyLogs appends every entry of from to to, in order.
func copyLogs(to, from raft.LogStore) error {
	first, last, err := logRange(from)
	if err != nil || last == 0 {
		return err
	}
	batch := make([]*raft.Log, 0, migrateChunk)
	for i := first; i <= last; i++ {
		l := new(raft.Log)
		if err := from.GetLog(i, l); err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		batch = append(batch, l)
		if len(batch) == migrateChunk || i == last {
			if err := to.StoreLogs(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}

// dropLogs deletes whatever entries old still has.
func dropLogs(old raft.LogStore) error {
	first, last, err := logRange(old)
	if err != nil || last == 0 {
		return err
	}
	return old.DeleteRange(first, last)
}

// logRange returns the first and last index of s; last is 0 when s is
// empty.
func logRange(s raft.LogStore) (first, last uint64, err error) {
	if first, err = s.FirstIndex(); err != nil {
		return 0, 0, err
	}
	last, err = s.LastIndex()
	return first, last, err
}

// syncDir makes the entries of dir durable, a rename among them included.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}
