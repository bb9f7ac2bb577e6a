package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Two worker processes share the queue; one is killed mid-work, and the
// other finishes every item, the killed one's included.
func TestRun(t *testing.T) {
	dsn := os.Getenv("LEASE_POSTGRES_DSN")
	if dsn == "" {
		t.Fatal("LEASE_POSTGRES_DSN is not set: run ../../scripts/with-postgres go test ./...")
	}
	var out bytes.Buffer
	cfg := config{dsn: dsn, items: 40, lease: time.Second, work: 10 * time.Millisecond}
	require.NoError(t, run(context.Background(), cfg, &out))
	require.Equal(t, `enqueued 40 items on thumbnails
alice is killed in the middle of her work: her claims must expire
bob is stopped gracefully
every item finished: true
bob finished items alice had started or never reached: true
`, out.String())
}

// The tour of the queue's features.
func TestTour(t *testing.T) {
	dsn := os.Getenv("LEASE_POSTGRES_DSN")
	if dsn == "" {
		t.Fatal("LEASE_POSTGRES_DSN is not set: run ../../scripts/with-postgres go test ./...")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, tour(ctx, dsn, &out))
	require.Equal(t, `invoices 1 and 3 committed, 2 rolled back: 2 jobs visible
paused: a claim of 10 got 0
resumed: sent invoice 1, sent invoice 3
dead letter after 1 of its 25 attempts, discarded: true
periodic: reconciled
invoices sent: 2
`, out.String())
}

func TestRunWithoutServer(t *testing.T) {
	cfg := config{items: 1, lease: time.Second}
	err := run(context.Background(), cfg, &bytes.Buffer{})
	require.ErrorIs(t, err, errUnreachable)
	cfg.dsn = "postgres://nobody@127.0.0.1:1/db?sslmode=disable&connect_timeout=2"
	err = run(context.Background(), cfg, &bytes.Buffer{})
	require.ErrorIs(t, err, errUnreachable)
}
