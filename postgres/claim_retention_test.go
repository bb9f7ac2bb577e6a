package postgres

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

func TestNewClaimStoreRefusesNegativeRetention(t *testing.T) {
	pool := newPool(t, "lease-claims-test")
	_, err := NewClaimStore(pool, WithRetention(claim.Retention{Cancelled: -time.Second}))
	requireInvalid(t, err, "retention.cancelled")
}

// A table of the first version, with items in every state, is migrated in
// place: its rows keep their states and claims, gain an empty kind, and
// the store's new features work on them. The name needs quoting, so the
// first version's check is found by what it says, not by its name.
func TestClaimStoreMigratesVersion1TableInPlace(t *testing.T) {
	pool := newPool(t, "lease-claims-test")
	s := claimStoreOnVersion1(t, pool, WithClaimTable(`it's "v1" `+uniqueTable()), WithRetention(claim.StandardRetention))
	_, err := s.pool.Exec(ctx, `INSERT INTO `+s.table+` (queue, key, payload, state, attempts, max_attempts, priority, enqueued_at, due, token, owner, dead_at)
VALUES ('q', 'k', 'visible', 1, 0, 3, 0, now(), now(), 0, NULL, NULL),
       ('q', NULL, 'claimed', 3, 1, 3, 0, now(), now() + interval '1 hour', 1, 'w', NULL),
       ('q', NULL, 'dead', 4, 3, 3, 0, now(), now(), 3, 'w', now())`)
	require.NoError(t, err)
	var token int64
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT token FROM "+s.table+" WHERE payload = 'claimed'").Scan(&token))

	require.NoError(t, s.Migrate(ctx))
	assert.Equal(t, claim.Counts{Visible: 1, Claimed: 1, Dead: 1}, counts(t, s, "q"))
	items, err := s.List(ctx, claim.Query{Queue: "q", Limit: 10})
	require.NoError(t, err)
	require.Len(t, items, 3)
	for _, it := range items {
		assert.Empty(t, it.Kind)
	}
	// The claim made before the migration is still live and fenced.
	claimed := items[1]
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: claim.Ref{Item: claimed.ID, Token: uint64(token)}, How: claim.SettleComplete}))
	assert.Equal(t, claim.Completed, lookup(t, s, claimed.ID).State, "kept under the new version's retention")
	require.NoError(t, s.Cancel(ctx, "q", items[0].ID))
	assert.Equal(t, claim.Counts{Dead: 1, Completed: 1, Cancelled: 1}, counts(t, s, "q"))
	got := enqueue(t, s, claim.NewItem{Queue: "q", Kind: "mail", MaxAttempts: 1})
	assert.Equal(t, "mail", lookup(t, s, got[0].ID).Kind)
	// The key of the visible item, now cancelled and kept, is still held.
	again := enqueue(t, s, claim.NewItem{Queue: "q", Key: "k", MaxAttempts: 1})
	assert.Equal(t, items[0].ID, again[0].ID)
}

// claimStoreOnVersion1 returns a store whose table is at version 1, as the
// first release left it, closed and dropped when the test ends.
func claimStoreOnVersion1(t *testing.T, pool *pgxpool.Pool, opts ...ClaimOption) *ClaimStore {
	t.Helper()
	return claimStoreOnVersion(t, pool, 1, opts...)
}

// claimStoreOnVersion returns a store whose table is at version, as the
// release that brought it left it, closed and dropped when the test ends.
func claimStoreOnVersion(t *testing.T, pool *pgxpool.Pool, version int, opts ...ClaimOption) *ClaimStore {
	t.Helper()
	s, err := NewClaimStore(pool, opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		dropClaimTable(t, pool, s)
	})
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.sql.migrations); err != nil {
			return err
		}
		for v, migrate := range s.claimMigrations()[:version] {
			if err := migrate(ctx, tx); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, s.sql.markMigration, s.table, v+1); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	return s
}

// Clean deletes only from the transaction holding the table's cleaning
// lock: while another holds it, Clean deletes nothing and returns at once.
func TestClaimStoreCleanOneAtATime(t *testing.T) {
	s := newTestClaimStore(t, WithRetention(claim.Retention{Completed: time.Millisecond}))
	enqueue(t, s, item("q", "a"), item("q", "b"))
	for _, c := range claimN(t, s, "q", "w", 2) {
		require.NoError(t, s.Settle(ctx, complete(c)))
	}
	_, err := s.pool.Exec(ctx, "UPDATE "+s.table+" SET finished_at = now() - interval '1 minute'")
	require.NoError(t, err)

	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	var got bool
	require.NoError(t, tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock(1818977646, hashtext($1))", s.table).Scan(&got))
	require.True(t, got)
	n, err := s.Clean(ctx, 10)
	require.NoError(t, err)
	assert.Zero(t, n, "another cleaner holds the lock")
	assert.Equal(t, claim.Counts{Completed: 2}, counts(t, s, "q"))
	require.NoError(t, tx.Commit(ctx))

	n, err = s.Clean(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "bounded by its limit")
	n, err = s.Clean(ctx, 10)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, claim.Counts{}, counts(t, s, "q"))
}

// The cleaner's transaction does not wait for its commit to reach the
// disk: its statement sets synchronous_commit off for that transaction
// only.
func TestClaimStoreCleanCommitsAsynchronously(t *testing.T) {
	s := newTestClaimStore(t, WithRetention(claim.Retention{Completed: time.Millisecond}))
	enqueue(t, s, item("q", "a"))
	require.NoError(t, s.Settle(ctx, complete(claimN(t, s, "q", "w", 1)[0])))
	_, err := s.pool.Exec(ctx, "UPDATE "+s.table+" SET finished_at = now() - interval '1 minute'")
	require.NoError(t, err)
	conn, err := s.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	tag, err := tx.Exec(ctx, s.sql.clean, int64(1000), int64(1000), int64(0), 10, s.table)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())
	var sync string
	require.NoError(t, tx.QueryRow(ctx, "SELECT current_setting('synchronous_commit')").Scan(&sync))
	assert.Equal(t, "off", sync)
	require.NoError(t, tx.Commit(ctx))
	require.NoError(t, conn.QueryRow(ctx, "SELECT current_setting('synchronous_commit')").Scan(&sync))
	assert.Equal(t, "on", sync, "only for the cleaner's transaction")
}
