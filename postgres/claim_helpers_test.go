package postgres

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// newTestClaimStore returns a migrated store on a fresh table of its own and
// a pool of its own, closed and dropped when the test ends: what a
// conformance suite needs for each test.
func newTestClaimStore(tb testing.TB, opts ...ClaimOption) *ClaimStore {
	tb.Helper()
	return claimStoreOn(tb, newPool(tb, "lease-claims-test"), append([]ClaimOption{WithClaimTable(uniqueTable())}, opts...)...)
}

// claimStoreOn returns a migrated store on pool, closed when the test ends,
// its table dropped and its migrations forgotten.
func claimStoreOn(tb testing.TB, pool *pgxpool.Pool, opts ...ClaimOption) *ClaimStore {
	tb.Helper()
	s, err := NewClaimStore(pool, opts...)
	require.NoError(tb, err)
	require.NoError(tb, s.Migrate(ctx))
	tb.Cleanup(func() {
		require.NoError(tb, s.Close())
		dropClaimTable(tb, pool, s)
	})
	return s
}

// secondStore returns another store on s's table, on a pool of its own
// named app, closed when the test ends: another process, as far as the
// database can tell.
func secondStore(tb testing.TB, s *ClaimStore, app string, opts ...ClaimOption) *ClaimStore {
	tb.Helper()
	pool := newPool(tb, app)
	o, err := NewClaimStore(pool, append([]ClaimOption{withQuotedTable(s)}, opts...)...)
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, o.Close()) })
	return o
}

// withQuotedTable names s's table again, with its schema.
func withQuotedTable(s *ClaimStore) ClaimOption {
	return claimOptionFunc(func(c *claimConfig) {
		c.table = s.cfg.table
		c.schema, c.schemaSet = s.cfg.schema, s.cfg.schemaSet
	})
}

func dropClaimTable(tb testing.TB, pool *pgxpool.Pool, s *ClaimStore) {
	tb.Helper()
	_, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+s.table)
	require.NoError(tb, err)
	_, err = pool.Exec(ctx, "DELETE FROM "+s.migrationsTable+" WHERE target = $1", s.table)
	require.NoError(tb, err)
}

// expire moves the lease of the claimed item id ago into the past on the
// database's clock: the database-side way to let a lease run out without
// waiting for it.
func expire(tb testing.TB, s *ClaimStore, id claim.ItemID, ago time.Duration) {
	tb.Helper()
	tag, err := s.pool.Exec(ctx, "UPDATE "+s.table+" SET due = now() - $2::bigint * interval '1 microsecond' WHERE id = $1 AND state = 3",
		int64(id), micros(ago))
	require.NoError(tb, err)
	require.EqualValues(tb, 1, tag.RowsAffected(), "item %d is not claimed", id)
}

// makeDue makes the delayed item id due now.
func makeDue(tb testing.TB, s *ClaimStore, id claim.ItemID) {
	tb.Helper()
	tag, err := s.pool.Exec(ctx, "UPDATE "+s.table+" SET due = now() WHERE id = $1 AND state = 1", int64(id))
	require.NoError(tb, err)
	require.EqualValues(tb, 1, tag.RowsAffected(), "item %d is not waiting", id)
}

func enqueue(tb testing.TB, s *ClaimStore, items ...claim.NewItem) []claim.Item {
	tb.Helper()
	for i := range items {
		if items[i].MaxAttempts == 0 {
			items[i].MaxAttempts = 3
		}
	}
	got, err := s.Enqueue(ctx, items)
	require.NoError(tb, err)
	require.Len(tb, got, len(items))
	return got
}

func item(queue, payload string) claim.NewItem {
	return claim.NewItem{Queue: queue, Payload: []byte(payload), MaxAttempts: 3}
}

func claimN(tb testing.TB, s *ClaimStore, queue, owner string, n int) []claim.Claim {
	tb.Helper()
	got, err := s.Claim(ctx, claim.ClaimRequest{Queue: queue, Owner: owner, Limit: n, Lease: long})
	require.NoError(tb, err)
	return got
}

func complete(c claim.Claim) claim.Settlement {
	return claim.Settlement{Ref: c.Ref, How: claim.SettleComplete}
}

func lookup(tb testing.TB, s *ClaimStore, id claim.ItemID) claim.Item {
	tb.Helper()
	it, err := s.Lookup(ctx, id)
	require.NoError(tb, err)
	return it
}

func counts(tb testing.TB, s *ClaimStore, queue string) claim.Counts {
	tb.Helper()
	c, err := s.Counts(ctx, queue)
	require.NoError(tb, err)
	return c
}

func requireStale(tb testing.TB, err error) {
	tb.Helper()
	require.ErrorIs(tb, err, lease.ErrStaleUse)
	var le *lease.Error
	require.ErrorAs(tb, err, &le)
}

func payloads(cs []claim.Claim) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c.Payload)
	}
	return out
}
