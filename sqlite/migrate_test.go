package sqlite_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/sqlite"
)

// version1 is the schema of version 1 as a release of that version wrote
// it, and a few rows in it: the file an upgrade finds.
var version1 = []string{
	`CREATE TABLE lease_schema (version INTEGER NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)`,
	`INSERT INTO lease_schema VALUES (1, 0)`,
	`CREATE TABLE lease_locks (
  name TEXT NOT NULL PRIMARY KEY, execution_id TEXT NOT NULL,
  token INTEGER NOT NULL CHECK (token > 0), expires_at INTEGER NOT NULL
) WITHOUT ROWID`,
	`CREATE TABLE lease_claims (
  id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL, key TEXT, payload BLOB,
  state INTEGER NOT NULL CHECK (state IN (1, 3, 4)), attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL CHECK (max_attempts > 0), priority INTEGER NOT NULL,
  timeout_ns INTEGER NOT NULL DEFAULT 0, enqueued_at INTEGER NOT NULL, due INTEGER NOT NULL,
  token INTEGER NOT NULL DEFAULT 0, owner TEXT, dead_at INTEGER, history TEXT NOT NULL DEFAULT '[]'
)`,
	`CREATE INDEX lease_claims_ready ON lease_claims (queue, priority, due, id) WHERE state IN (1, 3)`,
	`CREATE INDEX lease_claims_due ON lease_claims (due) WHERE state IN (1, 3)`,
	`CREATE UNIQUE INDEX lease_claims_key ON lease_claims (queue, key) WHERE key IS NOT NULL`,
	`CREATE INDEX lease_claims_dead ON lease_claims (queue, id) WHERE state = 4`,
	`INSERT INTO lease_locks VALUES ('reports', 'worker-1', 7, 9223372036854775807)`,
	// 1 waiting, keyed; 2 claimed by w until an hour after the epoch
	// (token 1); 3 dead with a failure; 4 deleted, so that the highest
	// ID ever issued is above every ID left.
	`INSERT INTO lease_claims (id, queue, key, payload, state, attempts, max_attempts, priority, timeout_ns, enqueued_at, due)
VALUES (1, 'q', 'k1', x'6f6e65', 1, 0, 3, 2, 5000000000, :epoch, :epoch)`,
	`INSERT INTO lease_claims (id, queue, payload, state, attempts, max_attempts, priority, enqueued_at, due, token, owner)
VALUES (2, 'q', x'74776f', 3, 1, 3, 0, :epoch, :epoch + 3600000000000, 1, 'w')`,
	`INSERT INTO lease_claims (id, queue, state, attempts, max_attempts, priority, enqueued_at, due, token, dead_at, history)
VALUES (3, 'q', 4, 1, 1, 0, :epoch, :epoch, 1, :epoch, '[{"a":1,"o":"w","t":` + "1893456000000000000" + `,"r":"boom"}]')`,
	`INSERT INTO lease_claims (id, queue, state, max_attempts, priority, enqueued_at, due) VALUES (4, 'q', 1, 1, 0, :epoch, :epoch)`,
	`DELETE FROM lease_claims WHERE id = 4`,
}

// A file of schema version 1 is migrated in place when a store of this
// version opens it: its rows are kept, with no kind, tags or metadata, its
// keys still hold, a live claim can still be settled, and an ID once
// issued is not issued again.
func TestMigrateFromVersion1(t *testing.T) {
	t.Parallel()
	path := tempFile(t)
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	for _, stmt := range version1 {
		_, err := raw.Exec(stmt, sql.Named("epoch", epoch.UnixNano()))
		require.NoError(t, err, stmt)
	}
	require.NoError(t, raw.Close())

	clk := leasetest.NewFakeClock(epoch)
	s := newClaimStore(t, path, testOptions(clk)...)
	ctx := t.Context()

	waiting, err := s.Lookup(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, claim.Item{ID: 1, Queue: "q", Key: "k1", Payload: []byte("one"), State: claim.Visible,
		MaxAttempts: 3, Priority: 2, Timeout: 5 * time.Second, EnqueuedAt: epoch, VisibleAt: epoch}, waiting)
	claimed, err := s.Lookup(ctx, 2)
	require.NoError(t, err)
	assert.Equal(t, claim.Claimed, claimed.State)
	assert.Equal(t, "two", string(claimed.Payload))
	dead, err := s.Lookup(ctx, 3)
	require.NoError(t, err)
	assert.Equal(t, claim.Dead, dead.State)
	assert.Equal(t, epoch, dead.DeadAt)
	assert.Equal(t, []claim.Failure{{Attempt: 1, Owner: "w", At: epoch, Reason: "boom"}}, dead.History)
	_, err = s.Lookup(ctx, 4)
	require.ErrorIs(t, err, claim.ErrNotFound)
	counts, err := s.Counts(ctx, "q")
	require.NoError(t, err)
	assert.Equal(t, claim.Counts{Visible: 1, Claimed: 1, Dead: 1}, counts)

	got, err := s.Enqueue(ctx, []claim.NewItem{
		{Queue: "q", Kind: "mail", Tags: []string{"urgent"}, Metadata: []byte("m"), MaxAttempts: 1},
		{Queue: "q", Key: "k1", MaxAttempts: 1},
	})
	require.NoError(t, err)
	assert.Equal(t, claim.ItemID(5), got[0].ID, "no ID is issued twice")
	assert.Equal(t, claim.ItemID(1), got[1].ID, "the migrated key still holds")
	assert.True(t, got[1].Duplicate)
	fresh, err := s.Lookup(ctx, 5)
	require.NoError(t, err)
	assert.Equal(t, "mail", fresh.Kind)
	assert.Equal(t, []string{"urgent"}, fresh.Tags)
	assert.Equal(t, []byte("m"), fresh.Metadata)

	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: claim.Ref{Item: 2, Token: 1}, How: claim.SettleComplete}),
		"the claim made before the upgrade is live")
	require.NoError(t, s.Close())

	raw, err = sql.Open("sqlite", path)
	require.NoError(t, err)
	defer func() { _ = raw.Close() }()
	var version, locks int
	require.NoError(t, raw.QueryRow(`SELECT max(version) FROM lease_schema`).Scan(&version))
	assert.Equal(t, sqlite.SchemaVersion, version)
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM lease_locks WHERE name = 'reports' AND token = 7`).Scan(&locks))
	assert.Equal(t, 1, locks, "the locks are left as they were")
	indexes := []string{}
	rows, err := raw.Query(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'lease_claims'
  AND sql IS NOT NULL ORDER BY name`)
	require.NoError(t, err)
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		indexes = append(indexes, name)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"lease_claims_dead_at", "lease_claims_due", "lease_claims_finished", "lease_claims_kept",
		"lease_claims_key", "lease_claims_ready"}, indexes, "the claim table's indexes")
	var check string
	require.NoError(t, raw.QueryRow(`PRAGMA integrity_check`).Scan(&check))
	assert.Equal(t, "ok", check)
}
