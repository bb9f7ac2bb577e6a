package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	dsn := os.Getenv("LEASE_POSTGRES_DSN")
	if dsn == "" {
		t.Fatal("LEASE_POSTGRES_DSN is not set: run ../../scripts/with-postgres go test ./...")
	}
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), dsn, &out))
	require.Equal(t, `alice holds nightly-report
bob acquired it too: false
bob holds nightly-report, token greater than alice's: true
alice's late write refused: true
report: written by bob
`, out.String())
}

func TestRunWithoutServer(t *testing.T) {
	err := run(context.Background(), "", &bytes.Buffer{})
	require.ErrorIs(t, err, errUnreachable)
	err = run(context.Background(), "postgres://nobody@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", &bytes.Buffer{})
	require.ErrorIs(t, err, errUnreachable)
}
