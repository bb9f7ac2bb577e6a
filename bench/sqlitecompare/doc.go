// Package sqlitecompare measures this repository's SQLite work queue
// (github.com/leasehold/lease/sqlite's ClaimStore, worked by
// claim.Broker.Work) side by side with River on its SQLite driver
// (github.com/riverqueue/river/riverdriver/riversqlite) and goqite
// (maragu.dev/goqite), all through modernc.org/sqlite, on files in one
// directory and with one synchronous setting: the commit floor of the
// disk, burn-down at several worker counts, enqueue in batches and one item
// per call, pickup latency in the process and from another process, and
// the heap of the store while items pass through (MemorySoak).
//
// It is a module of its own, so that neither River nor goqite reaches the
// bench module or the sqlite module. Its test runs the whole harness at a
// tiny size; cmd/sqlitequeues runs it at full size, and docs/benchmarks.md
// reports the numbers:
//
//	go run ./cmd/sqlitequeues -burndown 5000 -runs 3
//	go run ./cmd/sqlitequeues -history 10000,100000,1000000 -runs 3
//
// With Config.History every file first holds that many finished items
// where the queue keeps them (Queue.Keeps: our store with
// claim.StandardRetention, River's completed jobs; goqite deletes what it
// ran and keeps none), loaded into each queue's template file in one
// statement, then ANALYZE. Every burn-down checks that each item ran
// exactly once. cmd/sqlitequeues's package comment lists its flags.
//
// A program that calls Measure must call ServeChild first: the
// cross-process pickup starts the running executable again as the other
// process.
package sqlitecompare
