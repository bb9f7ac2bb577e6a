package postgres

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// The environment scripts/with-postgres exports.
const (
	dsnEnv = "LEASE_POSTGRES_DSN"
	ctlEnv = "LEASE_POSTGRES_CTL"
)

var ctx = context.Background()

// long is a lease that outlasts any test: expiry is simulated with age.
const long = time.Hour

var tableSeq atomic.Int64

// uniqueTable returns a table name no other test in this run uses, so tests
// never see each other's locks.
func uniqueTable() string {
	return fmt.Sprintf("lease_test_%d_%d", os.Getpid(), tableSeq.Add(1))
}

type pgxpoolConfig = pgxpool.Config

// newPool returns a pool on the test server whose connections carry app as
// their application_name (so a test can find and kill them), closed when
// the test ends. Each tune function may change its configuration.
func newPool(tb testing.TB, app string, tune ...func(*pgxpoolConfig)) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(os.Getenv(dsnEnv))
	require.NoError(tb, err, "parse %s", dsnEnv)
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	for _, f := range tune {
		f(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(tb, err)
	tb.Cleanup(pool.Close)
	return pool
}

// newTestProvider returns a migrated provider on a fresh table of its own,
// dropped when the test ends.
func newTestProvider(tb testing.TB, opts ...LockOption) *LockProvider {
	tb.Helper()
	return providerOn(tb, newPool(tb, "lease-test"), append([]LockOption{WithLockTable(uniqueTable())}, opts...)...)
}

// providerOn returns a migrated provider on pool; its table is dropped when
// the test ends.
func providerOn(tb testing.TB, pool *pgxpool.Pool, opts ...LockOption) *LockProvider {
	tb.Helper()
	p, err := NewLockProvider(pool, opts...)
	require.NoError(tb, err)
	require.NoError(tb, p.Migrate(ctx))
	tb.Cleanup(func() {
		dropTable(tb, pool, p.table)
		dropTable(tb, pool, p.waiters)
	})
	return p
}

func dropTable(tb testing.TB, pool *pgxpool.Pool, table string) {
	tb.Helper()
	_, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+table)
	require.NoError(tb, err)
}

// age moves the lease of name into the past by ago, as if that much time had
// passed since it expired: the database-side equivalent of advancing a fake
// clock, so no test waits for an expiry.
func age(tb testing.TB, p *LockProvider, name string, ago time.Duration) {
	tb.Helper()
	require.NoError(tb, ageErr(p, name, ago))
}

// ageErr is age for goroutines other than the test's.
func ageErr(p *LockProvider, name string, ago time.Duration) error {
	tag, err := p.pool.Exec(ctx, "UPDATE "+p.table+
		" SET expires_at = clock_timestamp() - $2::bigint * interval '1 microsecond' WHERE name = $1 AND expires_at > '-infinity'",
		name, micros(ago))
	if err == nil && tag.RowsAffected() != 1 {
		err = fmt.Errorf("age %q: no live row", name)
	}
	return err
}

// row is a lock's row as stored.
type row struct {
	ExecutionID string
	Token       int64
	ExpiresAt   time.Time // zero when Released
	Released    bool      // expires_at is -infinity
}

// rows returns the whole table, by name.
func rows(tb testing.TB, p *LockProvider) map[string]row {
	tb.Helper()
	rs, err := p.pool.Query(ctx, "SELECT name, execution_id, token, expires_at FROM "+p.table)
	require.NoError(tb, err)
	out := map[string]row{}
	var (
		name    string
		r       row
		expires pgtype.Timestamptz
	)
	_, err = pgx.ForEachRow(rs, []any{&name, &r.ExecutionID, &r.Token, &expires}, func() error {
		r.ExpiresAt, r.Released = expires.Time, expires.InfinityModifier == pgtype.NegativeInfinity
		out[name] = r
		return nil
	})
	require.NoError(tb, err)
	return out
}

// mustAcquire acquires a lock that must be free.
func mustAcquire(tb testing.TB, p *LockProvider, name, exec string) lock.Lease {
	tb.Helper()
	l, err := p.Acquire(ctx, name, exec, long)
	require.NoError(tb, err)
	require.NotNil(tb, l, "Acquire(%q, %q): lock should be free", name, exec)
	return *l
}

// requireHeld asserts that name is held: another execution cannot have it.
func requireHeld(tb testing.TB, p *LockProvider, name string) {
	tb.Helper()
	l, err := p.Acquire(ctx, name, "intruder", long)
	require.NoError(tb, err)
	require.Nil(tb, l, "%q should be held", name)
}

// requireInvalid asserts err reports bad input in field.
func requireInvalid(tb testing.TB, err error, field string) {
	tb.Helper()
	require.ErrorIs(tb, err, lease.ErrInvalidArgument)
	var le *lease.Error
	require.ErrorAs(tb, err, &le)
	require.Equal(tb, field, le.Field, "error: %v", err)
}
