package postgres

import (
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/lock"
)

func TestNewRejectsBadOptions(t *testing.T) {
	pool := newPool(t, "lease-test")
	tests := []struct {
		name  string
		pool  *pgxpool.Pool
		opts  []LockOption
		field string
	}{
		{"nil pool", nil, nil, "pool"},
		{"empty table", pool, []LockOption{WithLockTable("")}, "table"},
		{"table too long", pool, []LockOption{WithLockTable(strings.Repeat("t", 64))}, "table"},
		{"table with NUL", pool, []LockOption{WithLockTable("t\x00")}, "table"},
		{"table not UTF-8", pool, []LockOption{WithLockTable("t\xff")}, "table"},
		{"empty schema", pool, []LockOption{WithLockSchema("")}, "schema"},
		{"empty schema after another", pool, []LockOption{WithLockSchema("s"), WithLockSchema("")}, "schema"},
		{"schema too long", pool, []LockOption{WithLockSchema(strings.Repeat("s", 64))}, "schema"},
		{"schema with NUL", pool, []LockOption{WithLockSchema("s\x00")}, "schema"},
		{"schema not UTF-8", pool, []LockOption{WithLockSchema("s\xff")}, "schema"},
		{"negative lock delay", pool, []LockOption{WithLockDelay(-time.Second)}, "lock delay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewLockProvider(tt.pool, tt.opts...)
			requireInvalid(t, err, tt.field)
			assert.Nil(t, p)
		})
	}
}

func TestSequenceName(t *testing.T) {
	long := strings.Repeat("t", 63)
	tests := []struct {
		table, want string
	}{
		{"lease_locks", "lease_locks_token_seq"},
		{strings.Repeat("t", 53), strings.Repeat("t", 53) + "_token_seq"},
		{long, strings.Repeat("t", 44) + sequenceName(long)[44:]},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, sequenceName(tt.table))
	}
	// Long names are cut to fit, on a character boundary, and do not
	// collide when they share a prefix.
	for _, table := range []string{long, long[:62] + "u", strings.Repeat("é", 31)} {
		s := sequenceName(table)
		assert.LessOrEqual(t, len(s), maxIdentifierLen, s)
		assert.True(t, utf8.ValidString(s), s)
	}
	assert.NotEqual(t, sequenceName(long), sequenceName(long[:62]+"u"))
}

func TestMigrateConcurrentAndIdempotent(t *testing.T) {
	table := uniqueTable()
	const procs = 8
	providers := make([]*LockProvider, procs)
	for i := range providers {
		p, err := NewLockProvider(newPool(t, "lease-test"), WithLockSchema(table+"_schema"), WithLockTable(table))
		require.NoError(t, err)
		providers[i] = p
	}
	t.Cleanup(func() {
		_, err := providers[0].pool.Exec(ctx, "DROP SCHEMA "+`"`+table+`_schema" CASCADE`)
		require.NoError(t, err)
	})
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for i, p := range providers {
		wg.Go(func() { errs[i] = p.Migrate(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "process %d", i)
	}
	require.NoError(t, providers[0].Migrate(ctx), "again")
	l := mustAcquire(t, providers[3], "n", "x")
	requireHeld(t, providers[5], "n")
	assert.Equal(t, "x", rows(t, providers[0])["n"].ExecutionID)
	require.NoError(t, providers[1].Release(ctx, nil))
	require.NoError(t, providers[7].Release(ctx, []lock.Lease{l}))
}

func TestEmptySchemaIsRefusedAndCreatesNothing(t *testing.T) {
	// An empty schema given on purpose is a mistake (an unset variable, say),
	// not a request for the unqualified default.
	pool := newPool(t, "lease-test")
	table := uniqueTable()
	p, err := NewLockProvider(pool, WithLockSchema(""), WithLockTable(table))
	requireInvalid(t, err, "schema")
	assert.Nil(t, p)
	var n int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname IN ($1, $2)", table, sequenceName(table)).Scan(&n))
	assert.Zero(t, n, "nothing may be created")

	// Leaving WithLockSchema out keeps the table unqualified.
	p, err = NewLockProvider(pool, WithLockTable(table))
	require.NoError(t, err)
	assert.Equal(t, `"`+table+`"`, p.table)
}

// TestMigrateConcurrentFirstStarts runs Migrate from many sessions at once
// where nothing exists yet, as every instance of a fleet does on its first
// start. Each caller has a pool of its own, so the calls overlap in separate
// server backends, and each round names new schemas or tables, so every
// round races on creating them.
func TestMigrateConcurrentFirstStarts(t *testing.T) {
	const (
		procs  = 16
		rounds = 2
	)
	// Each caller's own session, connected before the race starts. Commits
	// need not wait for the disk: durability plays no part in this race.
	session := func(t *testing.T, params map[string]string) *pgxpool.Pool {
		pool := newPool(t, "lease-test", func(c *pgxpoolConfig) {
			c.MaxConns = 1
			c.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
			maps.Copy(c.ConnConfig.RuntimeParams, params)
		})
		require.NoError(t, pool.Ping(ctx))
		return pool
	}
	pools := make([]*pgxpool.Pool, procs)
	for i := range pools {
		pools[i] = session(t, nil)
	}
	admin := pools[0]
	newSchema := func(t *testing.T) string {
		schema := uniqueTable() + "_schema"
		t.Cleanup(func() {
			_, err := admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			require.NoError(t, err)
		})
		return schema
	}
	provider := func(t *testing.T, pool *pgxpool.Pool, opts ...LockOption) *LockProvider {
		p, err := NewLockProvider(pool, opts...)
		require.NoError(t, err)
		return p
	}
	tests := []struct {
		name string
		// setup prepares a subtest; its result names a round's callers:
		// round(r)(i) is caller i of round r, on pools[i] unless told
		// otherwise.
		setup func(t *testing.T) (round func(r int) func(i int) *LockProvider)
	}{
		{"same schema and table", func(t *testing.T) func(int) func(int) *LockProvider {
			return func(int) func(int) *LockProvider {
				schema := newSchema(t)
				return func(i int) *LockProvider {
					return provider(t, pools[i], WithLockSchema(schema), WithLockTable("locks"))
				}
			}
		}},
		{"tables in one new schema", func(t *testing.T) func(int) func(int) *LockProvider {
			return func(int) func(int) *LockProvider {
				schema := newSchema(t)
				return func(i int) *LockProvider {
					return provider(t, pools[i], WithLockSchema(schema), WithLockTable(fmt.Sprintf("locks_%d", i)))
				}
			}
		}},
		{"new schema each", func(t *testing.T) func(int) func(int) *LockProvider {
			return func(int) func(int) *LockProvider {
				return func(i int) *LockProvider {
					return provider(t, pools[i], WithLockSchema(newSchema(t)), WithLockTable("locks"))
				}
			}
		}},
		{"tables in one new schema, repeatable read by default", func(t *testing.T) func(int) func(int) *LockProvider {
			// A server or role may default to a stricter isolation level,
			// where a transaction's snapshot is taken by its first statement,
			// before the lock is granted.
			rr := make([]*pgxpool.Pool, procs)
			for i := range rr {
				rr[i] = session(t, map[string]string{"default_transaction_isolation": "repeatable read"})
			}
			return func(int) func(int) *LockProvider {
				schema := newSchema(t)
				return func(i int) *LockProvider {
					return provider(t, rr[i], WithLockSchema(schema), WithLockTable(fmt.Sprintf("locks_%d", i)))
				}
			}
		}},
		{"one table named with and without its schema", func(t *testing.T) func(int) func(int) *LockProvider {
			// Half the callers qualify the table, the other half find it
			// through search_path: one table, two spellings.
			schema := newSchema(t)
			_, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
			require.NoError(t, err)
			viaPath := make([]*pgxpool.Pool, procs)
			for i := 1; i < procs; i += 2 {
				viaPath[i] = session(t, map[string]string{"search_path": pgx.Identifier{schema}.Sanitize()})
			}
			return func(r int) func(int) *LockProvider {
				table := WithLockTable(fmt.Sprintf("locks_%d", r))
				return func(i int) *LockProvider {
					if i%2 == 1 {
						return provider(t, viaPath[i], table)
					}
					return provider(t, pools[i], WithLockSchema(schema), table)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			round := tt.setup(t)
			for r := range rounds {
				caller := round(r)
				providers := make([]*LockProvider, procs)
				for i := range providers {
					providers[i] = caller(i)
				}
				start := make(chan struct{})
				errs := make([]error, procs)
				var wg sync.WaitGroup
				for i, p := range providers {
					wg.Go(func() {
						<-start
						errs[i] = p.Migrate(ctx)
					})
				}
				close(start)
				wg.Wait()
				for i, err := range errs {
					require.NoError(t, err, "round %d, caller %d", r, i)
				}
				for i, p := range providers {
					l := mustAcquire(t, p, fmt.Sprintf("n%d", i), "x")
					require.NoError(t, p.Release(ctx, []lock.Lease{l}))
				}
			}
		})
	}
}

func TestIdentifiersAreQuotedNotSpliced(t *testing.T) {
	// Each of these is one table, named exactly so; none may run as SQL.
	names := []string{
		`Mixed Case`,
		`with.dot`,
		`quote"inside`,
		`x; DROP TABLE victim; --`,
		`it's`,
		strings.Repeat("長", 21), // 63 bytes
	}
	pool := newPool(t, "lease-test")
	victim := uniqueTable()
	_, err := pool.Exec(ctx, "CREATE TABLE "+victim+" ()")
	require.NoError(t, err)
	t.Cleanup(func() { dropTable(t, pool, victim) })
	for i, name := range names {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			p := providerOn(t, pool, WithLockTable(name))
			l := mustAcquire(t, p, "n", "x")
			got, err := p.Renew(ctx, []lock.Lease{l}, long)
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.NoError(t, p.Release(ctx, got))
			var exists bool
			require.NoError(t, pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_class WHERE relname = $1)", name).Scan(&exists))
			assert.True(t, exists, "table %q", name)
		})
	}
	var exists bool
	require.NoError(t, pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", victim).Scan(&exists))
	assert.True(t, exists, "an identifier ran as SQL")
}

func TestMigrateWithoutCreatePrivilegeWhenTableExists(t *testing.T) {
	// An application role that may only read and write the table can still
	// call Migrate at start-up once the table exists.
	p := newTestProvider(t)
	role := uniqueTable() + "_app"
	admin := p.pool
	for _, stmt := range []string{
		"CREATE ROLE " + role + " LOGIN", // since PostgreSQL 15, no CREATE on public
		"GRANT SELECT, INSERT, UPDATE ON " + p.table + " TO " + role,
		"GRANT USAGE ON SEQUENCE " + p.seq + " TO " + role,
	} {
		_, err := admin.Exec(ctx, stmt)
		require.NoError(t, err, stmt)
	}
	t.Cleanup(func() {
		_, err := admin.Exec(ctx, "DROP OWNED BY "+role)
		require.NoError(t, err)
		_, err = admin.Exec(ctx, "DROP ROLE "+role)
		require.NoError(t, err)
	})
	cfg, err := pgxpool.ParseConfig(os.Getenv(dsnEnv))
	require.NoError(t, err)
	cfg.ConnConfig.User = role
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	app, err := NewLockProvider(pool, WithLockTable(strings.Trim(p.table, `"`)))
	require.NoError(t, err)
	require.NoError(t, app.Migrate(ctx))
	l := mustAcquire(t, app, "n", "x")
	require.NoError(t, app.Release(ctx, []lock.Lease{l}))
}
