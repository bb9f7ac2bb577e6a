package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// narration checks the run's output: the leader is whichever candidate won
// first, so the lines are built from the first one.
func narration(t *testing.T, out string, killed string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 7, out)
	first, _, _ := strings.Cut(lines[1], " ")
	require.Contains(t, []string{"alice", "bob"}, first, out)
	other := map[string]string{"alice": "bob", "bob": "alice"}[first]
	assert.Equal(t, []string{
		`alice and bob campaign for "leader-election-example" (lease 1s)`,
		first + " leads",
		other + " sees " + first + " lead",
		first + " " + killed,
		other + " leads",
		lines[5], // the bound, checked below
		other + " resigns and stops",
	}, lines)
	assert.Regexp(t, `^takeover within \S+: true$`, lines[5])
}

// Two candidate processes on PostgreSQL: the leader is killed, and the
// other leads once the killed one's lease has expired.
func TestPostgres(t *testing.T) {
	dsn := os.Getenv("LEASE_POSTGRES_DSN")
	if dsn == "" {
		t.Fatal("LEASE_POSTGRES_DSN is not set: run ../../scripts/with-postgres go test ./...")
	}
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), config{dsn: dsn, lease: time.Second}, &out))
	narration(t, out.String(), "is killed: it releases nothing, its lease must expire")
}

// Two candidates in one process: the leader is stopped and the other leads
// at once.
func TestMemory(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), config{memory: true, lease: time.Second}, &out))
	narration(t, out.String(), "is stopped: it releases the lock")
}

func TestRunWithoutServer(t *testing.T) {
	err := run(context.Background(), config{lease: time.Second}, &bytes.Buffer{})
	require.ErrorIs(t, err, errUnreachable)
	err = run(context.Background(), config{dsn: "postgres://nobody@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", lease: time.Second}, &bytes.Buffer{})
	require.ErrorIs(t, err, errUnreachable)
}
