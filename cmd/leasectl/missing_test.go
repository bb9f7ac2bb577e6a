package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/postgres"
)

// bareSchema returns a schema of its own on the test server, dropped when
// the test ends, with nothing migrated in it.
func bareSchema(t *testing.T) (dsn, schema string, pool *pgxpool.Pool) {
	t.Helper()
	dsn = os.Getenv(testDSNEnv)
	schema = fmt.Sprintf("leasectl_bare_%d_%d", os.Getpid(), schemaSeq.Add(1))
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		pool.Close()
		require.NoError(t, err)
	})
	return dsn, schema, pool
}

// A command on a store whose part it uses was never migrated says which
// part is missing and that migrate up creates it, naming the flags to
// give it; once migrated, the command works.
func TestPartNotMigrated(t *testing.T) {
	t.Run("locks", func(t *testing.T) {
		dsn, schema, pool := bareSchema(t)
		claims, err := postgres.NewClaimStore(pool, postgres.WithClaimSchema(schema))
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, claims.Close()) })
		require.NoError(t, claims.Migrate(ctx))
		hint := "'leasectl --schema " + schema + " migrate up' creates what is missing"
		for _, args := range [][]string{{"locks"}, {"leaders"}, {"leaders", "scheduler"}} {
			code, out, stderr := runArgs(append([]string{"--dsn", dsn, "--schema", schema}, args...)...)
			assert.Equal(t, exitError, code, "%q: %s", args, stderr)
			assert.Empty(t, out)
			assert.Contains(t, stderr, "leasectl: the store's locks are not set up: relation ", args)
			assert.Contains(t, stderr, "lease_locks", args)
			assert.Contains(t, stderr, hint, args)
			assert.NotContains(t, stderr, "SQLSTATE", args)
		}
		code, _, stderr := runArgs("--dsn", dsn, "--schema", schema, "queues")
		require.Equal(t, exitOK, code, "the queues need no locks: %s", stderr)
		code, _, stderr = runArgs("--dsn", dsn, "--schema", schema, "migrate", "up")
		require.Equal(t, exitOK, code, stderr)
		code, _, stderr = runArgs("--dsn", dsn, "--schema", schema, "locks")
		require.Equal(t, exitOK, code, stderr)
	})
	t.Run("claims", func(t *testing.T) {
		dsn, schema, pool := bareSchema(t)
		locks, err := postgres.NewLockProvider(pool, postgres.WithLockSchema(schema))
		require.NoError(t, err)
		require.NoError(t, locks.Migrate(ctx))
		hint := "'leasectl --schema " + schema + " --claim-table jobs migrate up' creates what is missing"
		for _, args := range [][]string{{"queues"}, {"items", "list", "--queue", "q"}, {"items", "show", "1"},
			{"queue", "pause", "q"}} {
			code, out, stderr := runArgs(append([]string{"--dsn", dsn, "--schema", schema, "--claim-table", "jobs"}, args...)...)
			assert.Equal(t, exitError, code, "%q: %s", args, stderr)
			assert.Empty(t, out)
			assert.Contains(t, stderr, "leasectl: the store's work queues are not set up: relation ", args)
			assert.Contains(t, stderr, hint, args)
		}
		code, _, stderr := runArgs("--dsn", dsn, "--schema", schema, "locks")
		require.Equal(t, exitOK, code, "the locks need no queues: %s", stderr)
	})
}

// An SQLite file that does not exist is not created by a command that
// only reads or changes it: it says so, and that migrate up creates it.
// The errors of opening a file name the part the command opened.
func TestSQLiteNotSetUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typo.db")
	for _, args := range [][]string{{"queues"}, {"locks"}, {"leaders"}, {"queue", "pause", "q"}, {"items", "show", "1"}} {
		code, out, stderr := runArgs(append([]string{"--dsn", "sqlite:" + path}, args...)...)
		assert.Equal(t, exitError, code, "%q: %s", args, stderr)
		assert.Empty(t, out)
		assert.Equal(t, "leasectl: the store is not set up: the SQLite file "+path+
			" does not exist; 'leasectl migrate up' creates what is missing\n", stderr, args)
	}
	assert.NoFileExists(t, path)
	code, _, stderr := runArgs("--dsn", "sqlite:"+path, "migrate", "up")
	require.Equal(t, exitOK, code, stderr)
	assert.FileExists(t, path)

	junk := filepath.Join(t.TempDir(), "junk.db")
	require.NoError(t, os.WriteFile(junk, []byte("not a database, not at all: plain text long enough to be read"), 0o600))
	for args, op := range map[string]string{"queues": "claims.open", "locks": "locks.open"} {
		code, _, stderr := runArgs("--dsn", "sqlite:"+junk, args)
		assert.Equal(t, exitError, code, stderr)
		assert.Contains(t, stderr, op, "%s opens the %s part only", args, op)
		assert.Contains(t, stderr, junk)
		assert.NotContains(t, stderr, map[string]string{"claims.open": "locks.open", "locks.open": "claims.open"}[op])
	}
}
