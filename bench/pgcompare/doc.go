// Package pgcompare measures this module's PostgreSQL lock provider
// (github.com/leasehold/lease/postgres) side by side with
// cirello.io/pglock, on the same server, through the same driver where
// possible, and its claim store (worked by claim.Broker) side by side with
// River: Measure runs the queue settings (RiverSettings, OurSettings,
// KindsRetentionSettings, FeatureSettings) and MeasureCleaner the
// retention cleaner beside claims; cmd/queues prints both.
//
// It is a module of its own, so that neither pglock nor lib/pq reaches the
// bench module or the core, and so that the bench module's tests need no
// server. Its tests and benchmarks need one: from this directory,
//
//	../../scripts/with-postgres go test -run . -bench . -benchmem -count 5 ./...
//
// Without LEASE_POSTGRES_DSN the tests fail with that instruction rather
// than skip. docs/postgres.md reports the numbers.
//
// With Config.History, each database first holds that many finished items
// (completed rows each store keeps: the claim store with a retention,
// River's completed jobs), bulk-loaded in one INSERT ... SELECT FROM
// generate_series and VACUUM ANALYZEd once per setting and size into a
// template database that every run's databases copy (CREATE DATABASE
// ... TEMPLATE ... STRATEGY FILE_COPY, PostgreSQL 15 and later), and
// Report.WriteHistoryMarkdown
// shows how each figure grows with them; HistorySettings are what it
// compares. CleanConfig.Rate runs the retention cleaner beside a steady
// load instead of claim loops. Every burn-down checks that each item ran
// exactly once. cmd/queues runs all of it; its package comment lists its
// flags. From this directory:
//
//	../../scripts/with-postgres go run ./cmd/queues -n 100000 -runs 5
//	../../scripts/with-postgres go run ./cmd/queues -n 100000 -history 10000,100000,1000000 -runs 3
//	../../scripts/with-postgres go run ./cmd/queues -n 0 -clean 1000000 -clean-rate 5000 -runs 3
package pgcompare
