package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimtest"
	"github.com/leasehold/lease/internal/captable"
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

// The claim store contract, with its capabilities, on a fake clock:
// exact times, no waiting. It is not parallel: its concurrent clauses keep
// both cores busy under the race detector, and run first, alone, well
// within the suite's 30 s per clause.
func TestClaimStoreConformance(t *testing.T) {
	exercised := claimtest.TestStore(t, func(t *testing.T, r claim.Retention) (claim.Store, lease.Clock) {
		clk := leasetest.NewFakeClock(epoch)
		return newClaimStore(t, tempFile(t), append(testOptions(clk), sqlite.WithRetention(r))...), clk
	})
	captable.CheckClaimStore(t, "sqlite.ClaimStore", (*sqlite.ClaimStore)(nil), exercised)
}
