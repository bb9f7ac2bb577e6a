package sqlitecompare

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the driver every queue here runs on
)

// Sync is the PRAGMA synchronous every queue of a measurement runs with.
type Sync string

// The settings measured.
const (
	SyncFull   Sync = "FULL"
	SyncNormal Sync = "NORMAL"
)

// dsn is the database/sql data source name of the file at path for the
// peers and the floor: WAL mode, the given synchronous setting, a busy
// timeout, and BEGIN IMMEDIATE for transactions, so that a second process
// waits for the write lock instead of failing to upgrade a read.
func dsn(path string, sync Sync) string {
	return "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(" + string(sync) +
		")&_pragma=busy_timeout(10000)&_txlock=immediate"
}

// openDB opens the file at path through database/sql on one connection,
// as both peers document for SQLite.
func openDB(ctx context.Context, path string, sync Sync) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(path, sync))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// floorSeq numbers the files of CommitFloor, so that each is fresh.
var floorSeq atomic.Int64

// CommitFloor measures how many one-row transactions per second one
// connection commits to a fresh file in dir for d: the rate a queue that
// commits every call on its own cannot beat on this disk.
func CommitFloor(ctx context.Context, dir string, sync Sync, d time.Duration) (float64, error) {
	db, err := openDB(ctx, filepath.Join(dir, fmt.Sprintf("floor-%s-%d.db", sync, floorSeq.Add(1))), sync)
	if err != nil {
		return 0, err
	}
	defer func() { _ = db.Close() }()
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)"); err != nil {
		return 0, err
	}
	start := time.Now()
	n := 0
	for time.Since(start) < d {
		if _, err := db.ExecContext(ctx, "INSERT INTO t (v) VALUES (?)", n); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
