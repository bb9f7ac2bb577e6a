package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

// The same commands work on an SQLite file, named by a sqlite: DSN,
// through the same seam as PostgreSQL.
func TestSQLiteStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	dsn := "sqlite:" + path
	run := func(args ...string) (int, string, string) {
		t.Helper()
		return runArgs(append([]string{"--dsn", dsn}, args...)...)
	}

	code, out, stderr := run("migrate", "up")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, out, path)

	store, err := sqlite.NewClaimStore(ctx, path)
	require.NoError(t, err)
	b := lease.Must(claim.New(store))
	defer func() { require.NoError(t, b.Close()) }()
	it, err := b.Enqueue(ctx, "emails", []byte(`{"to":"alice"}`))
	require.NoError(t, err)

	code, out, stderr = run("--json", "queues")
	require.Equal(t, exitOK, code, stderr)
	var queues []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &queues), out)
	require.Len(t, queues, 1)
	assert.Equal(t, "emails", queues[0]["name"])

	code, out, stderr = run("items", "list", "--queue", "emails")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, out, "visible")

	code, _, stderr = run("queue", "pause", "emails")
	require.Equal(t, exitOK, code, stderr)
	cs, err := b.Claim(ctx, "emails", "w", 1, time.Minute)
	require.NoError(t, err)
	assert.Empty(t, cs, "a queue paused from the command line hands out nothing")
	code, _, stderr = run("queue", "resume", "emails")
	require.Equal(t, exitOK, code, stderr)

	code, _, stderr = run("items", "cancel", "--queue", "emails", strconv.FormatUint(uint64(it.ID), 10))
	require.Equal(t, exitOK, code, stderr)
	code, _, _ = run("items", "show", "999")
	assert.Equal(t, exitNotFound, code)

	provider, err := sqlite.NewLockProvider(ctx, path)
	require.NoError(t, err)
	defer func() { require.NoError(t, provider.Close()) }()
	_, err = provider.Acquire(ctx, "reports", "exec-1", time.Minute)
	require.NoError(t, err)
	code, out, stderr = run("locks")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, out, "reports")
	assert.Contains(t, out, "exec-1")

	code, _, stderr = run("migrate", "sql")
	assert.Equal(t, exitUsage, code, "an SQLite file has no SQL to print")
	assert.Contains(t, stderr, "migrates itself")
	code, _, _ = run("--schema", "x", "queues")
	assert.Equal(t, exitUsage, code)
}
