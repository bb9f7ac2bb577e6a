package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// callerTx is a transaction of the caller's, as the store's Tx calls take
// it, with the caller's own ways to use and end it.
type callerTx struct {
	tx       ClaimTx
	exec     func(query string) error
	one      func() error // runs SELECT 1
	commit   func() error
	rollback func() error
}

// txKinds begin a transaction of the caller's on s's database: a pgx.Tx
// of s's pool, and a database/sql transaction through pgx's stdlib driver
// (on a *sql.DB of its own: another process, for the database).
var txKinds = []struct {
	name  string
	begin func(tb testing.TB, s *ClaimStore) callerTx
}{
	{"pgx", func(tb testing.TB, s *ClaimStore) callerTx {
		tx, err := s.pool.Begin(ctx)
		require.NoError(tb, err)
		tb.Cleanup(func() { _ = tx.Rollback(ctx) })
		return callerTx{
			tx:       tx,
			exec:     func(q string) error { _, err := tx.Exec(ctx, q); return err },
			one:      func() error { var one int; return tx.QueryRow(ctx, "SELECT 1").Scan(&one) },
			commit:   func() error { return tx.Commit(ctx) },
			rollback: func() error { return tx.Rollback(ctx) },
		}
	}},
	{"database/sql", func(tb testing.TB, _ *ClaimStore) callerTx {
		tx, err := newSQLDB(tb).BeginTx(ctx, nil)
		require.NoError(tb, err)
		tb.Cleanup(func() { _ = tx.Rollback() })
		return callerTx{
			tx:       SQLTx(tx),
			exec:     func(q string) error { _, err := tx.ExecContext(ctx, q); return err },
			one:      func() error { var one int; return tx.QueryRowContext(ctx, "SELECT 1").Scan(&one) },
			commit:   tx.Commit,
			rollback: tx.Rollback,
		}
	}},
}

// newSQLDB returns a *sql.DB of pgx's stdlib driver on the test server,
// closed when the test ends.
func newSQLDB(tb testing.TB) *sql.DB {
	tb.Helper()
	cfg, err := pgx.ParseConfig(os.Getenv(dsnEnv))
	require.NoError(tb, err, "parse %s", dsnEnv)
	cfg.RuntimeParams["application_name"] = "lease-claims-sql"
	db := stdlib.OpenDB(*cfg)
	tb.Cleanup(func() { require.NoError(tb, db.Close()) })
	return db
}

// An enqueue in a transaction that rolls back leaves nothing behind.
func TestClaimStoreEnqueueTxRollbackLeavesNothing(t *testing.T) {
	for _, kind := range txKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newTestClaimStore(t)
			tx := kind.begin(t, s)
			got, err := s.EnqueueTx(ctx, tx.tx, []claim.NewItem{item("q", "a"), item("q", "b")})
			require.NoError(t, err)
			require.Len(t, got, 2)
			require.NoError(t, tx.rollback())
			assert.Equal(t, claim.Counts{}, counts(t, s, "q"))
			_, err = s.Lookup(ctx, got[0].ID)
			require.ErrorIs(t, err, claim.ErrNotFound)
			assert.Empty(t, claimN(t, s, "q", "w", 10))
		})
	}
}

// An enqueue in a transaction is invisible until the commit, which makes
// it claimable and wakes a worker waiting in another process, and only
// then.
func TestClaimStoreEnqueueTxCommitWakesWaiter(t *testing.T) {
	for _, kind := range txKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newTestClaimStore(t)
			other := secondStore(t, s, "lease-claims-other", WithPoll(time.Hour))
			ready, stop := other.Notify("q")
			<-ready // the listener's start
			stop()
			ready, stop = other.Notify("q")
			defer stop()

			tx := kind.begin(t, s)
			got, err := s.EnqueueTx(ctx, tx.tx, []claim.NewItem{item("q", "in tx")})
			require.NoError(t, err)
			assert.Empty(t, claimN(t, other, "q", "w", 1), "not claimable before the commit")
			// Notifications arrive in commit order: once one sent after the
			// enqueue arrived, a notification the enqueue sent would have too.
			synced, stopSync := other.Notify("sync")
			defer stopSync()
			enqueue(t, s, item("sync", "after the enqueue"))
			<-synced
			select {
			case <-ready:
				t.Fatal("a waiter was woken before the commit")
			default:
			}
			require.NoError(t, tx.commit())
			select {
			case <-ready:
			case <-time.After(10 * time.Second):
				t.Fatal("the commit did not wake the waiter")
			}
			cs := claimN(t, other, "q", "w", 1)
			require.Len(t, cs, 1)
			assert.Equal(t, got[0].ID, cs[0].Item)
		})
	}
}

// A completion in a transaction that rolls back leaves the claim live; one
// that commits completes the item together with the handler's own write.
func TestClaimStoreCompleteTx(t *testing.T) {
	for _, kind := range txKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newTestClaimStore(t, WithRetention(claim.StandardRetention))
			side := uniqueTable()
			_, err := s.pool.Exec(ctx, "CREATE TABLE "+side+" (note text)")
			require.NoError(t, err)
			t.Cleanup(func() { _, _ = s.pool.Exec(ctx, "DROP TABLE "+side) })
			enqueue(t, s, item("q", "job"))
			c := claimN(t, s, "q", "w", 1)[0]

			tx := kind.begin(t, s)
			require.NoError(t, tx.exec("INSERT INTO "+side+" VALUES ('rolled back')"))
			require.NoError(t, s.CompleteTx(ctx, tx.tx, c.Ref))
			require.NoError(t, tx.rollback())
			assert.Equal(t, claim.Claimed, lookup(t, s, c.Item).State, "the rolled-back completion left the claim live")
			_, err = s.Extend(ctx, c.Ref, time.Minute)
			require.NoError(t, err)

			tx = kind.begin(t, s)
			require.NoError(t, tx.exec("INSERT INTO "+side+" VALUES ('committed')"))
			require.NoError(t, s.CompleteTx(ctx, tx.tx, c.Ref))
			assert.Equal(t, claim.Claimed, lookup(t, s, c.Item).State, "nothing shows before the commit")
			require.NoError(t, tx.commit())
			assert.Equal(t, claim.Completed, lookup(t, s, c.Item).State)
			rows, err := s.pool.Query(ctx, "SELECT note FROM "+side)
			require.NoError(t, err)
			assert.Equal(t, []string{"committed"}, notes(t, rows))
			requireStale(t, s.Settle(ctx, complete(c)))
		})
	}
}

// CompleteTx of a claim that is no longer live is stale and leaves the
// caller's transaction usable; the item's new claim is untouched.
func TestClaimStoreCompleteTxStale(t *testing.T) {
	for _, kind := range txKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newTestClaimStore(t)
			enqueue(t, s, item("q", "job"))
			old := claimN(t, s, "q", "w", 1)[0]
			expire(t, s, old.Item, time.Second)
			fresh := claimN(t, s, "q", "v", 1)[0]

			tx := kind.begin(t, s)
			requireStale(t, s.CompleteTx(ctx, tx.tx, old.Ref))
			require.NoError(t, tx.one(), "the transaction is still usable")
			require.NoError(t, tx.commit())
			assert.Equal(t, claim.Claimed, lookup(t, s, fresh.Item).State)
			require.NoError(t, s.Settle(ctx, complete(fresh)))
		})
	}
}

// A database error in the caller's transaction (here a lock that is not
// granted in time) leaves the transaction usable: the store's savepoint
// is rolled back, not the transaction.
func TestClaimStoreEnqueueTxFailureLeavesTxUsable(t *testing.T) {
	for _, kind := range txKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newTestClaimStore(t)
			tx := kind.begin(t, s)
			require.NoError(t, tx.exec("SET LOCAL lock_timeout = '50ms'"))
			locker, err := s.pool.Begin(ctx)
			require.NoError(t, err)
			_, err = locker.Exec(ctx, "LOCK TABLE "+s.table+" IN ACCESS EXCLUSIVE MODE")
			require.NoError(t, err)
			_, err = s.EnqueueTx(ctx, tx.tx, []claim.NewItem{item("q", "refused")})
			require.Error(t, err)
			require.NoError(t, locker.Rollback(ctx))
			require.NoError(t, tx.one(), "the transaction is still usable")
			_, err = s.EnqueueTx(ctx, tx.tx, []claim.NewItem{item("q", "after")})
			require.NoError(t, err)
			require.NoError(t, tx.commit())
			assert.Equal(t, claim.Counts{Visible: 1}, counts(t, s, "q"))
		})
	}
}

// A transaction already ended, or none, is bad input naming "tx", and
// nothing changes; so is a typed nil, which the store must not call.
func TestClaimStoreTxClosedOrNil(t *testing.T) {
	for _, kind := range txKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newTestClaimStore(t)
			enqueue(t, s, item("q", "job"))
			c := claimN(t, s, "q", "w", 1)[0]
			tx := kind.begin(t, s)
			require.NoError(t, tx.commit())
			_, err := s.EnqueueTx(ctx, tx.tx, []claim.NewItem{item("q", "late")})
			requireInvalid(t, err, "tx")
			requireInvalid(t, s.CompleteTx(ctx, tx.tx, c.Ref), "tx")
			assert.Equal(t, claim.Counts{Claimed: 1}, counts(t, s, "q"))
			require.NoError(t, s.Settle(ctx, complete(c)), "the claim is still live")
		})
	}
	s := newTestClaimStore(t)
	enqueue(t, s, item("q", "job"))
	c := claimN(t, s, "q", "w", 1)[0]
	for name, tx := range map[string]ClaimTx{
		"nil":           nil,
		"*pgx.Conn":     (*pgx.Conn)(nil),
		"*pgxpool.Pool": (*pgxpool.Pool)(nil),
		"pgx.Tx":        pgx.Tx((*pgxpool.Tx)(nil)),
		"SQLTx(nil)":    SQLTx(nil),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.EnqueueTx(ctx, tx, []claim.NewItem{item("q", "none")})
			requireInvalid(t, err, "tx")
			requireInvalid(t, s.CompleteTx(ctx, tx, c.Ref), "tx")
		})
	}
	assert.Equal(t, claim.Counts{Claimed: 1}, counts(t, s, "q"))
	require.NoError(t, s.Settle(ctx, complete(c)), "the claim is still live")
}

type sendReport struct{ To string }

func (sendReport) Kind() string { return "send_report" }

// An item of claim.ArgsItem, whose MaxAttempts is left to the default,
// enqueues in the caller's transaction with the default the Broker gives
// it; the caller's items are not changed.
func TestClaimStoreEnqueueTxFillsDefaults(t *testing.T) {
	s := newTestClaimStore(t)
	n, err := claim.ArgsItem("q", sendReport{To: "ops"})
	require.NoError(t, err)
	items := []claim.NewItem{n}
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	got, err := s.EnqueueTx(ctx, tx, items)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	assert.Equal(t, claim.DefaultMaxAttempts, got[0].MaxAttempts)
	assert.Equal(t, claim.DefaultMaxAttempts, lookup(t, s, got[0].ID).MaxAttempts)
	assert.Equal(t, "send_report", got[0].Kind)
	assert.Zero(t, items[0].MaxAttempts, "the caller's item is not changed")
}

// The database/sql adapter's Begin is a savepoint of the transaction: its
// rollback undoes what ran in it alone, and it nests.
func TestSQLTxBeginIsASavepoint(t *testing.T) {
	tx, err := newSQLDB(t).BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, "CREATE TEMP TABLE notes (note text)")
	require.NoError(t, err)

	sp, err := SQLTx(tx).Begin(ctx)
	require.NoError(t, err)
	_, err = sp.Exec(ctx, "INSERT INTO notes VALUES ('undone')")
	require.NoError(t, err)
	require.NoError(t, sp.Rollback(ctx))
	require.ErrorIs(t, sp.Commit(ctx), pgx.ErrTxClosed)

	sp, err = SQLTx(tx).Begin(ctx)
	require.NoError(t, err)
	nested, err := sp.Begin(ctx)
	require.NoError(t, err)
	_, err = nested.Exec(ctx, "INSERT INTO notes VALUES ('kept')")
	require.NoError(t, err)
	require.NoError(t, nested.Commit(ctx))
	require.NoError(t, sp.Commit(ctx))

	rows, err := tx.QueryContext(ctx, "SELECT note FROM notes")
	require.NoError(t, err)
	assert.Equal(t, []string{"kept"}, notes(t, rows))
}

// notes returns the text of each of rows, of pgx or of database/sql.
func notes(tb testing.TB, rows interface {
	Next() bool
	Scan(...any) error
	Err() error
}) []string {
	tb.Helper()
	var out []string
	for rows.Next() {
		var n string
		require.NoError(tb, rows.Scan(&n))
		out = append(out, n)
	}
	require.NoError(tb, rows.Err())
	return out
}

// BenchmarkClaimEnqueueTx enqueues one item in a transaction of the
// caller's, begun and committed around it, of pgx and of database/sql:
// the adapter's cost is what separates them.
func BenchmarkClaimEnqueueTx(b *testing.B) {
	s := benchClaimStore(b)
	items := noopItems("q", 1)
	b.Run("pgx", func(b *testing.B) {
		for b.Loop() {
			tx, err := s.pool.Begin(ctx)
			require.NoError(b, err)
			_, err = s.EnqueueTx(ctx, tx, items)
			require.NoError(b, err)
			require.NoError(b, tx.Commit(ctx))
		}
	})
	b.Run("database/sql", func(b *testing.B) {
		db := stdlib.OpenDBFromPool(s.pool)
		defer func() { require.NoError(b, db.Close()) }()
		for b.Loop() {
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(b, err)
			_, err = s.EnqueueTx(ctx, SQLTx(tx), items)
			require.NoError(b, err)
			require.NoError(b, tx.Commit())
		}
	})
}

// strictConnector makes connections of pgx's stdlib driver seen through a
// wrapper that offers database/sql only driver.Conn's methods, as some
// instrumenting wrappers do: database/sql then converts arguments itself
// and refuses pgx's.
type strictConnector struct{ dsn string }

func (c strictConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := stdlib.GetDefaultDriver().Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return strictConn{conn}, nil
}

func (strictConnector) Driver() driver.Driver { return stdlib.GetDefaultDriver() }

type strictConn struct{ driver.Conn }

// A transaction whose driver does not hand pgx its connection is bad input
// naming "tx", and is left usable.
func TestClaimStoreTxOfAnotherDriver(t *testing.T) {
	s := newTestClaimStore(t)
	enqueue(t, s, item("q", "job"))
	c := claimN(t, s, "q", "w", 1)[0]
	db := sql.OpenDB(strictConnector{os.Getenv(dsnEnv)})
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()

	_, err = s.EnqueueTx(ctx, SQLTx(tx), []claim.NewItem{item("q", "refused")})
	requireInvalid(t, err, "tx")
	assert.Contains(t, err.Error(), "pgx's stdlib driver")
	assert.Contains(t, err.Error(), "claims.enqueue tx: ")
	requireInvalid(t, s.CompleteTx(ctx, SQLTx(tx), c.Ref), "tx")
	_, err = SQLTx(tx).Begin(ctx)
	requireInvalid(t, err, "tx")
	var one int
	require.NoError(t, tx.QueryRowContext(ctx, "SELECT 1").Scan(&one), "the transaction is still usable")
	require.NoError(t, tx.Commit())
	assert.Equal(t, claim.Counts{Claimed: 1}, counts(t, s, "q"))
}
