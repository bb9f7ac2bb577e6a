package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/postgres"
)

// testDSNEnv is the variable scripts/with-postgres sets to its server's
// DSN.
const testDSNEnv = "LEASE_POSTGRES_DSN"

var ctx = context.Background()

var schemaSeq atomic.Int64

// env is one test's store: a schema of its own on the test server, dropped
// when the test ends, with the tables leasectl migrate up creates.
type env struct {
	t      *testing.T
	dsn    string
	schema string
	pool   *pgxpool.Pool
	broker *claim.Broker
	locks  *postgres.LockProvider
}

// newEnv returns a migrated env. Its broker keeps finished items for a
// day, so that completed and cancelled items can be listed.
func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{
		t:      t,
		dsn:    os.Getenv(testDSNEnv),
		schema: fmt.Sprintf("leasectl_test_%d_%d", os.Getpid(), schemaSeq.Add(1)),
	}
	pool, err := pgxpool.New(ctx, e.dsn)
	require.NoError(t, err)
	e.pool = pool
	t.Cleanup(func() {
		_, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{e.schema}.Sanitize()+" CASCADE")
		pool.Close()
		require.NoError(t, err)
	})
	code, _, stderr := e.run("migrate", "up")
	require.Equal(t, exitOK, code, stderr)
	store, err := postgres.NewClaimStore(pool, postgres.WithClaimSchema(e.schema),
		postgres.WithRetention(claim.StandardRetention))
	require.NoError(t, err)
	e.broker = lease.Must(claim.New(store))
	t.Cleanup(func() { require.NoError(t, e.broker.Close()) })
	e.locks, err = postgres.NewLockProvider(pool, postgres.WithLockSchema(e.schema))
	require.NoError(t, err)
	return e
}

// run runs leasectl on the env's store with args and returns its exit
// status and what it wrote to stdout and stderr.
func (e *env) run(args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	return runArgs(append([]string{"--dsn", e.dsn, "--schema", e.schema}, args...)...)
}

// runArgs runs leasectl with args as they are.
func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// ok runs leasectl with args, requires it to succeed, and returns stdout.
func (e *env) ok(args ...string) string {
	e.t.Helper()
	code, out, stderr := e.run(args...)
	require.Equal(e.t, exitOK, code, "leasectl %s: %s", strings.Join(args, " "), stderr)
	require.Empty(e.t, stderr)
	return out
}

// fails runs leasectl with args, requires it to exit with code and an
// error message containing msg on stderr, and nothing on stdout.
func (e *env) fails(code int, msg string, args ...string) {
	e.t.Helper()
	got, out, stderr := e.run(args...)
	require.Equal(e.t, code, got, "leasectl %s: %s", strings.Join(args, " "), stderr)
	require.Contains(e.t, stderr, msg)
	require.True(e.t, strings.HasPrefix(stderr, "leasectl: "), stderr)
	require.Empty(e.t, out)
}

// okJSON runs leasectl with --json and args, requires it to succeed, and
// decodes its output into a T.
func okJSON[T any](e *env, args ...string) T {
	e.t.Helper()
	var v T
	out := e.ok(append([]string{"--json"}, args...)...)
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	require.NoError(e.t, dec.Decode(&v), out)
	return v
}

// lines splits text output into lines, each with its runs of spaces
// squeezed to one, for comparing aligned columns.
func lines(out string) []string {
	var ls []string
	for l := range strings.SplitSeq(strings.TrimRight(out, "\n"), "\n") {
		ls = append(ls, strings.Join(strings.Fields(l), " "))
	}
	return ls
}

// requireAligned requires every line of a table to have, where each of
// the header's columns starts, a character that is not a space, with a
// space before it: the columns are aligned.
func requireAligned(t *testing.T, out string) {
	t.Helper()
	ls := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := ls[0]
	for i := 1; i < len(header); i++ {
		if header[i] != ' ' && header[i-1] == ' ' {
			for _, l := range ls[1:] {
				require.Greater(t, len(l), i, "line %q ends before column %d of %q", l, i, header)
				require.Equal(t, byte(' '), l[i-1], "column at %d of %q not aligned in %q", i, header, l)
				require.NotEqual(t, byte(' '), l[i], "column at %d of %q not aligned in %q", i, header, l)
			}
		}
	}
}

// enqueue adds an item to queue and returns it.
func (e *env) enqueue(queue string, payload string, opts ...claim.EnqueueOption) claim.Item {
	e.t.Helper()
	it, err := e.broker.Enqueue(ctx, queue, []byte(payload), opts...)
	require.NoError(e.t, err)
	return it
}

// claimOne claims the next item of queue for an hour.
func (e *env) claimOne(queue string) claim.Claim {
	e.t.Helper()
	cs, err := e.broker.Claim(ctx, queue, "test-owner", 1, time.Hour)
	require.NoError(e.t, err)
	require.Len(e.t, cs, 1)
	return cs[0]
}

// dead adds an item to queue and fails its only attempt, with reason.
func (e *env) dead(queue, payload, reason string) claim.Item {
	e.t.Helper()
	it := e.enqueue(queue, payload, claim.MaxAttempts(1))
	c := e.claimOne(queue)
	require.Equal(e.t, it.ID, c.Item)
	out, err := e.broker.Fail(ctx, c, reason, time.Second, time.Second)
	require.NoError(e.t, err)
	require.Equal(e.t, claim.DeadLettered, out)
	return it
}

// lookup returns the item id as the store has it now.
func (e *env) lookup(id claim.ItemID) (claim.Item, error) {
	return e.broker.Lookup(ctx, id)
}
