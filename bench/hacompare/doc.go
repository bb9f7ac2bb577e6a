// Package hacompare measures this repository's highly available work
// queue, replicated.NewClaimStore on a three-node raft cluster, side by
// side with River on PostgreSQL, through pgcompare's harness: the same
// burn-down of N items with the same number of workers, pickup latency
// into an idle queue and right after the burn-down, rounds interleaved,
// medians, and every item checked to run exactly once.
//
// The cluster runs in this process: three replicated.Nodes, each on its
// own TCP transport on 127.0.0.1 (mutual TLS with certificates of a
// throwaway CA, or plain TCP), its own directory with fsync on, and
// raft's default (LAN) timeouts; a ClaimStore and a claim.Broker on every
// node. The workers run all on the leader, or spread over the three
// nodes, whose stores forward their calls to the leader. River runs on
// the PostgreSQL server the harness is given, at fsync=on.
//
// It also measures, apart from the comparison (MeasureRetained,
// MeasureKill): the heap a node takes to keep a million completed items,
// the time of a raft snapshot of them and of a restart that restores it,
// and the leader killed in the middle of a burn-down.
//
// It is a module of its own, so that raft reaches neither pgcompare nor the
// bench module. cmd/haqueues runs it; from bench/hacompare:
//
//	../../scripts/with-postgres go run ./cmd/haqueues -n 20000 -runs 5
//	../../scripts/with-postgres go run ./cmd/haqueues -n 20000 -runs 5 -spread -tls=false -retention
//	../../scripts/with-postgres go run ./cmd/haqueues -n 20000 -runs 5 -all
//	go run ./cmd/haqueues -n 0 -retained 1000000
//	go run ./cmd/haqueues -n 0 -kill 100000 -retention
//
// Flags of cmd/haqueues:
//
//	-dsn        the PostgreSQL server for River (default $LEASE_POSTGRES_DSN); needed when -n > 0
//	-n          items enqueued and burnt down in each run of the comparison (20000); 0 skips it
//	-batch      items per bulk enqueue call (1000)
//	-workers    handlers of each system (100)
//	-spread     spread the replicated queue's workers over the three nodes (default: all on the leader)
//	-tls        mutual TLS between the nodes (default true); false runs them on plain TCP
//	-retention  keep completed items for claim.StandardRetention (24 h) instead of deleting them
//	-all        measure all eight combinations of -spread, -tls and -retention beside River, interleaved
//	-pickup     items whose pickup latency each run measures (200), after -warmup (5)
//	-runs       rounds; each runs River then the replicated queue; tables show medians (3)
//	-timeout    limit on each phase of a run (10m)
//	-retained   also keep this many completed items on a cluster and measure heap, snapshot and restore
//	-kill       also burn down this many items and kill the leader half way
//	-lease      the claims' lease in the -kill measurement (5s): how long a claim of the killed node waits
//	-cpuprofile write a CPU profile of the whole run to this file
//
// Nothing needs a PostgreSQL server but the comparison (-n > 0).
package hacompare
