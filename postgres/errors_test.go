package postgres

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/lock"
)

// ops calls each operation of p once, for tests about how they fail.
func ops(p *LockProvider, c context.Context) map[string]error {
	held := lock.Lease{Name: "n", ExecutionID: "x", Token: 1}
	_, acquireErr := p.Acquire(c, "n", "x", time.Minute)
	_, renewErr := p.Renew(c, []lock.Lease{held}, time.Minute)
	_, _, holderErr := p.Holder(c, "n")
	_, heldErr := p.Held(c, "", 0)
	return map[string]error{
		"acquire": acquireErr,
		"renew":   renewErr,
		"release": p.Release(c, []lock.Lease{held}),
		"migrate": p.Migrate(c),
		"holder":  holderErr,
		"held":    heldErr,
	}
}

func TestContextErrorsAreWrapped(t *testing.T) {
	p := newTestProvider(t)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	expired, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel2()
	for op, err := range ops(p, cancelled) {
		assert.ErrorIs(t, err, context.Canceled, op)
		assert.ErrorContains(t, err, "postgres: "+op, op)
	}
	for op, err := range ops(p, expired) {
		assert.ErrorIs(t, err, context.DeadlineExceeded, op)
	}
	assert.Empty(t, rows(t, p), "a cancelled call must change nothing")
}

func TestDatabaseErrorsAreWrapped(t *testing.T) {
	// A provider whose table was never created: every statement fails in
	// the database, and the caller sees the server's error.
	p, err := NewLockProvider(newPool(t, "lease-test"), WithLockTable(uniqueTable()))
	require.NoError(t, err)
	errs := ops(p, ctx)
	delete(errs, "migrate") // it creates the table
	for op, err := range errs {
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr, op)
		assert.Equal(t, "42P01", pgErr.Code, "%s: undefined_table, got %v", op, err)
	}
}

func TestUnreachableServerIsAnError(t *testing.T) {
	// A port nothing listens on: found by listening, then closing.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	pool, err := pgxpool.New(ctx, "postgres://nobody@"+addr+"/db?sslmode=disable&connect_timeout=5")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	p, err := NewLockProvider(pool)
	require.NoError(t, err)
	for op, err := range ops(p, ctx) {
		var connErr *pgconn.ConnectError
		assert.ErrorAs(t, err, &connErr, "%s: %v", op, err)
		assert.False(t, errors.Is(err, context.Canceled), op)
	}
	// Bad input is refused before any connection is tried.
	_, err = p.Acquire(ctx, "", "x", time.Minute)
	requireInvalid(t, err, "name")
}
