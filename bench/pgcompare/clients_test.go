package pgcompare

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"cirello.io/pglock"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	_ "github.com/lib/pq"              // registers the "postgres" driver pglock.New insists on
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/postgres"
)

// client is what the comparison needs of a lock library: take a named lock
// without waiting for it, keep held locks alive, give one back. A handle is
// whatever the library returns for a held lock.
type client interface {
	acquire(ctx context.Context, name string) (handle any, ok bool, err error)
	renew(ctx context.Context, handles []any) error
	release(ctx context.Context, handle any) error
}

// leaseDuration is long enough that nothing expires during a run.
const leaseDuration = time.Minute

// impl opens clients of one library on one table; every client opened on a
// table shares its locks. maxConns sizes the client's connection pool.
type impl struct {
	name string
	open func(tb testing.TB, table string, maxConns int) client
}

var impls = []impl{
	{"lease", openOurs},
	{"pglock+pgx", func(tb testing.TB, table string, n int) client { return openPglock(tb, "pgx", table, n) }},
	{"pglock+pq", func(tb testing.TB, table string, n int) client { return openPglock(tb, "postgres", table, n) }},
}

var tableSeq atomic.Int64

// newTable returns a table name unique to this run.
func newTable() string {
	return fmt.Sprintf("pgcompare_%d_%d", os.Getpid(), tableSeq.Add(1))
}

// ours is this module's provider.
type ours struct {
	p    *postgres.LockProvider
	exec string
}

var execSeq atomic.Int64

func openOurs(tb testing.TB, table string, maxConns int) client {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(os.Getenv(dsnEnv))
	require.NoError(tb, err)
	cfg.MaxConns = int32(maxConns)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(tb, err)
	tb.Cleanup(pool.Close)
	p, err := postgres.NewLockProvider(pool, postgres.WithLockTable(table))
	require.NoError(tb, err)
	require.NoError(tb, p.Migrate(context.Background()))
	tb.Cleanup(func() {
		_, err := pool.Exec(context.Background(), "DROP TABLE IF EXISTS "+table)
		require.NoError(tb, err)
	})
	return ours{p: p, exec: fmt.Sprint("exec-", execSeq.Add(1))}
}

func (o ours) acquire(ctx context.Context, name string) (any, bool, error) {
	l, err := o.p.Acquire(ctx, name, o.exec, leaseDuration)
	if l == nil {
		return nil, false, err
	}
	return *l, true, nil
}

func (o ours) renew(ctx context.Context, handles []any) error {
	leases := make([]lock.Lease, len(handles))
	for i, h := range handles {
		leases[i] = h.(lock.Lease)
	}
	got, err := o.p.Renew(ctx, leases, leaseDuration)
	if err == nil && len(got) != len(leases) {
		err = fmt.Errorf("renewed %d of %d", len(got), len(leases))
	}
	return err
}

func (o ours) release(ctx context.Context, h any) error {
	return o.p.Release(ctx, []lock.Lease{h.(lock.Lease)})
}

// theirs is pglock. Its heartbeat goroutine is off (frequency 0) so that
// acquire and release are compared alone; renew sends the heartbeats.
type theirs struct {
	c *pglock.Client
}

func openPglock(tb testing.TB, driver, table string, maxConns int) client {
	tb.Helper()
	db, err := sql.Open(driver, os.Getenv(dsnEnv))
	require.NoError(tb, err)
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns) // the default 2 would reconnect under load
	tb.Cleanup(func() { require.NoError(tb, db.Close()) })
	opts := []pglock.ClientOption{
		pglock.WithCustomTable(table),
		pglock.WithLeaseDuration(leaseDuration),
		pglock.WithHeartbeatFrequency(0),
	}
	var c *pglock.Client
	if driver == "postgres" {
		c, err = pglock.New(db, opts...)
	} else {
		c, err = pglock.UnsafeNew(db, opts...) // New accepts lib/pq only
	}
	require.NoError(tb, err)
	require.NoError(tb, c.TryCreateTable())
	tb.Cleanup(func() {
		_, err := db.Exec("DROP TABLE IF EXISTS " + table)
		require.NoError(tb, err)
	})
	return theirs{c: c}
}

func (t theirs) acquire(ctx context.Context, name string) (any, bool, error) {
	l, err := t.c.AcquireContext(ctx, name, pglock.FailIfLocked())
	if errors.Is(err, pglock.ErrNotAcquired) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return l, true, nil
}

// renew sends one heartbeat per lock: pglock has no batch.
func (t theirs) renew(ctx context.Context, handles []any) error {
	for _, h := range handles {
		if err := t.c.SendHeartbeat(ctx, h.(*pglock.Lock)); err != nil {
			return err
		}
	}
	return nil
}

func (t theirs) release(ctx context.Context, h any) error {
	return t.c.ReleaseContext(ctx, h.(*pglock.Lock))
}
