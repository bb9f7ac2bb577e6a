package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
	"github.com/leasehold/lease/claim/claimtest"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/sqlite"
)

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// tempFile is a path for a new database file in a directory of the test.
func tempFile(t testing.TB) string {
	return filepath.Join(t.TempDir(), "lease.db")
}

func newClaimStore(t testing.TB, path string, opts ...sqlite.Option) *sqlite.ClaimStore {
	t.Helper()
	s, err := sqlite.NewClaimStore(t.Context(), path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// The claim store contract on a fake clock: exact times, no waiting. It is
// not parallel: its concurrent clauses keep both cores busy under the race
// detector, and run first, alone, well within the suite's 30 s per clause.
func TestClaimStoreConformance(t *testing.T) {
	claimtest.TestStore(t, func(t *testing.T) (claim.Store, lease.Clock) {
		clk := leasetest.NewFakeClock(epoch)
		return newClaimStore(t, tempFile(t), testOptions(clk)...), clk
	})
}

// The retention contract on a fake clock. It has no concurrent clause, so
// it runs with the parallel tests.
func TestClaimStoreCleanerConformance(t *testing.T) {
	t.Parallel()
	claimtest.TestCleaner(t, func(t *testing.T, r claim.Retention) (claimstore.Cleaner, lease.Clock) {
		clk := leasetest.NewFakeClock(epoch)
		return newClaimStore(t, tempFile(t), append(testOptions(clk), sqlite.WithRetention(r))...), clk
	})
}

// Pausing and listing queues, on a fake clock; with the parallel tests
// too.
func TestClaimStoreQueuesConformance(t *testing.T) {
	t.Parallel()
	claimtest.TestQueues(t, func(t *testing.T) (claimtest.QueueStore, lease.Clock) {
		clk := leasetest.NewFakeClock(epoch)
		return newClaimStore(t, tempFile(t), testOptions(clk)...), clk
	})
}
