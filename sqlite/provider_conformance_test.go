package sqlite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/captable"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election/electiontest"
	"github.com/leasehold/lease/lock/locktest"
	"github.com/leasehold/lease/sqlite"
)

func newProvider(t testing.TB, path string, opts ...sqlite.Option) *sqlite.LockProvider {
	t.Helper()
	p, err := sqlite.NewLockProvider(t.Context(), path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// testOptions are the options of the suites: a fake clock, and no sync
// per commit, which durability tests check elsewhere.
func testOptions(clk lease.Clock) []sqlite.Option {
	return []sqlite.Option{sqlite.WithClock(clk), sqlite.WithSynchronous(sqlite.SyncNormal), sqlite.WithPoll(100 * time.Millisecond)}
}

// The lock contract on the host's wall clock, the provider's default: the
// suite waits out leases of a second. (On a fake clock it takes 10,000
// locks one by one, which the race detector makes slow.)
func TestProviderConformance(t *testing.T) {
	t.Parallel()
	exercised := locktest.TestProvider(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		return newProvider(t, tempFile(t), sqlite.WithSynchronous(sqlite.SyncNormal)), lease.SystemClock()
	})
	captable.CheckLockProvider(t, "sqlite.LockProvider", (*sqlite.LockProvider)(nil), exercised)
}

// The election clauses on a fake clock.
func TestElection(t *testing.T) {
	t.Parallel()
	electiontest.TestElection(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		clk := leasetest.NewFakeClock(epoch)
		return newProvider(t, tempFile(t), testOptions(clk)...), clk
	})
}
