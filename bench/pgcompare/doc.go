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
package pgcompare
