package postgres

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// uniqueSchema returns a schema name no other test of this run uses; it is
// dropped, with everything in it, when the test ends.
func uniqueSchema(tb testing.TB, pool *pgxpool.Pool) string {
	tb.Helper()
	name := fmt.Sprintf("lease_test_schema_%d_%d", os.Getpid(), tableSeq.Add(1))
	tb.Cleanup(func() {
		_, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE")
		require.NoError(tb, err)
	})
	return name
}

// schemaCatalog describes what schema holds, with the schema's name
// replaced by SCHEMA so that two schemas can be compared: the columns,
// constraints, indexes, sequences and table options of its tables, and
// the rows of its table of applied migrations.
func schemaCatalog(tb testing.TB, pool *pgxpool.Pool, schema string) []string {
	tb.Helper()
	queries := []string{
		`SELECT format('column %s.%s %s null=%s default=%s identity=%s', table_name, column_name, data_type,
  is_nullable, column_default, is_identity)
FROM information_schema.columns WHERE table_schema = $1`,
		`SELECT format('constraint %s %s %s', c.relname, k.contype, pg_get_constraintdef(k.oid))
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1`,
		`SELECT format('index %s', indexdef) FROM pg_indexes WHERE schemaname = $1`,
		`SELECT format('sequence %s %s %s', sequencename, data_type, min_value) FROM pg_sequences WHERE schemaname = $1`,
		`SELECT format('options %s %s', c.relname, c.reloptions) FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
		`SELECT format('migration %s %s', target, version) FROM ` + pgx.Identifier{schema, ClaimMigrationsTable}.Sanitize() +
			` WHERE $1::text IS NOT NULL`,
	}
	var out []string
	for _, q := range queries {
		rows, err := pool.Query(ctx, q, schema)
		require.NoError(tb, err, q)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(tb, err, q)
		for _, l := range lines {
			out = append(out, strings.ReplaceAll(l, schema, "SCHEMA"))
		}
	}
	require.NotEmpty(tb, out)
	return out
}

// applySQL runs each migration in a transaction of its own, as a migration
// tool would, sending its text whole.
func applySQL(tb testing.TB, pool *pgxpool.Pool, migrations []Migration) {
	tb.Helper()
	for _, m := range migrations {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, m.SQL)
			return err
		})
		require.NoError(tb, err, "version %d:\n%s", m.Version, m.SQL)
	}
}

// The exported SQL builds what Migrate builds, table for table, and leaves
// Migrate nothing to do; a ClaimStore migrated by Migrate up to some version
// is brought up to date by the exported SQL of the versions after it.
func TestMigrationSQLMatchesMigrate(t *testing.T) {
	pool := newPool(t, "lease-migration-sql")
	byMigrate, bySQL := uniqueSchema(t, pool), uniqueSchema(t, pool)

	p, err := NewLockProvider(pool, WithLockSchema(byMigrate))
	require.NoError(t, err)
	require.NoError(t, p.Migrate(ctx))
	s, err := NewClaimStore(pool, WithClaimSchema(byMigrate))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.NoError(t, s.Migrate(ctx))

	lockSQL, err := LockMigrationSQL(WithLockSchema(bySQL))
	require.NoError(t, err)
	claimSQL, err := ClaimMigrationSQL(WithClaimSchema(bySQL))
	require.NoError(t, err)
	require.Len(t, claimSQL, len(s.claimMigrations()), "every migration of ClaimStore.Migrate is exported")
	for i, m := range claimSQL {
		assert.Equal(t, i+1, m.Version)
	}
	applySQL(t, pool, lockSQL)
	applySQL(t, pool, claimSQL)
	want := schemaCatalog(t, pool, byMigrate)
	assert.ElementsMatch(t, want, schemaCatalog(t, pool, bySQL))

	// Migrate finds nothing to do, and the store works.
	p2, err := NewLockProvider(pool, WithLockSchema(bySQL))
	require.NoError(t, err)
	require.NoError(t, p2.Migrate(ctx))
	s2, err := NewClaimStore(pool, WithClaimSchema(bySQL))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s2.Close()) })
	require.NoError(t, s2.Migrate(ctx))
	assert.ElementsMatch(t, want, schemaCatalog(t, pool, bySQL))
	l, err := p2.Acquire(ctx, "a", "x", long)
	require.NoError(t, err)
	require.NotNil(t, l)
}

// Version 2's DO block finds version 1's check of the state column whatever
// PostgreSQL named it, here after a table rename changed the name it would
// choose now.
func TestClaimMigrationSQLAfterRename(t *testing.T) {
	pool := newPool(t, "lease-migration-sql")
	schema := uniqueSchema(t, pool)
	first, err := ClaimMigrationSQL(WithClaimSchema(schema), WithClaimTable("before"))
	require.NoError(t, err)
	applySQL(t, pool, first[:1])
	_, err = pool.Exec(ctx, "ALTER TABLE "+pgx.Identifier{schema, "before"}.Sanitize()+" RENAME TO after")
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "UPDATE "+pgx.Identifier{schema, ClaimMigrationsTable}.Sanitize()+" SET target = $1",
		pgx.Identifier{schema, "after"}.Sanitize())
	require.NoError(t, err)

	rest, err := ClaimMigrationSQL(WithClaimSchema(schema), WithClaimTable("after"))
	require.NoError(t, err)
	applySQL(t, pool, rest[1:])
	s, err := NewClaimStore(pool, WithClaimSchema(schema), WithClaimTable("after"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.NoError(t, s.Migrate(ctx))
	var checks int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_constraint
WHERE conrelid = $1::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%state%'`, s.Table()).Scan(&checks))
	assert.Equal(t, 1, checks, "version 1's check is gone, version 2's is there")
}

// Table and schema names are quoted in the SQL as Migrate quotes them,
// and bad ones are refused as New and NewClaimStore refuse them.
func TestMigrationSQLNames(t *testing.T) {
	m, err := LockMigrationSQL()
	require.NoError(t, err)
	require.Len(t, m, 2)
	assert.Contains(t, m[0].SQL, `CREATE TABLE "lease_locks"`)
	assert.Contains(t, m[1].SQL, `CREATE TABLE "lease_locks_waiters"`)
	assert.NotContains(t, m[0].SQL, "SCHEMA")

	c, err := ClaimMigrationSQL(WithClaimTable(`it's "odd"`), WithClaimSchema("s"))
	require.NoError(t, err)
	assert.Contains(t, c[0].SQL, `CREATE SCHEMA IF NOT EXISTS "s";`)
	assert.Contains(t, c[0].SQL, `CREATE TABLE "s"."it's ""odd"""`)
	assert.Contains(t, c[0].SQL, `VALUES ('"s"."it''s ""odd"""', 1);`)

	for _, err := range []error{
		func() error { _, err := LockMigrationSQL(WithLockTable("")); return err }(),
		func() error { _, err := LockMigrationSQL(WithLockSchema("")); return err }(),
		func() error { _, err := ClaimMigrationSQL(WithClaimTable(strings.Repeat("x", 64))); return err }(),
		func() error { _, err := ClaimMigrationSQL(WithClaimSchema("a\x00b")); return err }(),
	} {
		assert.ErrorIs(t, err, lease.ErrInvalidArgument)
	}
}

// Table is the provider's table as its statements name it.
func TestProviderTable(t *testing.T) {
	pool := newPool(t, "lease-provider-table")
	p, err := NewLockProvider(pool)
	require.NoError(t, err)
	assert.Equal(t, `"lease_locks"`, p.Table())
	p, err = NewLockProvider(pool, WithLockSchema("s"), WithLockTable("t"))
	require.NoError(t, err)
	assert.Equal(t, `"s"."t"`, p.Table())
}
