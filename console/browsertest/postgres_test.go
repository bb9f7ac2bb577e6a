package browsertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/postgres"
)

// postgresStore is a PostgreSQL claim store in a table of its own, on the
// database LEASE_POSTGRES_DSN names; the test fails without one. The table
// is dropped when the test ends.
func postgresStore(t *testing.T, _ *lease.Service) claim.Store {
	dsn := os.Getenv("LEASE_POSTGRES_DSN")
	if dsn == "" {
		t.Fatal("LEASE_POSTGRES_DSN is not set: run ../../scripts/with-postgres go test ./...")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	var b [6]byte
	_, _ = rand.Read(b[:])
	table := "console_" + hex.EncodeToString(b[:])
	store, err := postgres.NewClaimStore(pool, postgres.WithClaimTable(table),
		postgres.WithRetention(claim.StandardRetention))
	require.NoError(t, err)
	require.NoError(t, store.Migrate(ctx))
	t.Cleanup(func() {
		_, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+table+" CASCADE")
		require.NoError(t, err)
		pool.Close()
	})
	return store
}
