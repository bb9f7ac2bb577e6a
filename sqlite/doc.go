// Package sqlite keeps locks and work queues in an SQLite file: the durable
// default of package lease that needs nothing but a file.
// [NewLockProvider] opens a file as a [lock.Provider] (with waiting and
// inspection, so lock.Manager and lock/election work on it) and
// [NewClaimStore] as a [claim.Store] for claim.Broker. Every process of a host that opens the same file shares its
// locks and queues.
//
// The driver is modernc.org/sqlite, SQLite compiled to Go: no cgo. The
// file is in WAL mode, so readers never wait for the writer. Each store
// keeps one connection for writes, whose transactions begin with BEGIN
// IMMEDIATE and commit the writes of many goroutines together (group
// commit); a busy timeout and retries keep another process's write from
// ever reaching a caller as SQLITE_BUSY. A waiter learns of a change made
// in its own process at once, and of one made by another process from
// PRAGMA data_version: on Linux as soon as it is synced, the store being
// told (inotify) of writes to the file's write-ahead log, and otherwise
// within the poll interval ([WithPoll]).
//
// Commits are synced to disk before they return ([SyncFull]); [SyncNormal]
// trades the last commits before a power loss for one fsync fewer per
// commit. Deadlines are instants of the host's wall clock, which every
// process reads; fencing tokens keep a clock step from letting two holders
// act.
//
// See docs/sqlite.md in the repository for the schema, its migrations, and
// how to choose between this package, the memory stores, PostgreSQL and
// etcd.
package sqlite
