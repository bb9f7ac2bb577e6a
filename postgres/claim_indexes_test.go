package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// claimIndexes returns the definitions of the indexes of s's table that
// cover its claim paths, and its storage options.
func claimIndexes(t *testing.T, s *ClaimStore) (defs, options []string) {
	t.Helper()
	rows, err := s.pool.Query(ctx, `SELECT pg_get_indexdef(indexrelid) FROM pg_index
WHERE indrelid = $1::regclass AND pg_get_indexdef(indexrelid) LIKE '%(queue, %due%' ORDER BY 1`, s.table)
	require.NoError(t, err)
	defs, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = $1::regclass`, s.table).Scan(&options))
	return defs, options
}

// requireVersion5Indexes checks that waiting items and claims have an
// index each, and the table its autovacuum settings.
func requireVersion5Indexes(t *testing.T, s *ClaimStore) {
	t.Helper()
	defs, options := claimIndexes(t, s)
	require.Len(t, defs, 2, "%q", defs)
	assert.Contains(t, defs[0], "(queue, due) WHERE (state = 3)")
	assert.Contains(t, defs[1], "(queue, priority, due, id) WHERE (state = 1)")
	assert.Subset(t, options, []string{
		"autovacuum_vacuum_scale_factor=0.01", "autovacuum_vacuum_threshold=1000",
		"autovacuum_vacuum_insert_scale_factor=0.01", "autovacuum_vacuum_insert_threshold=1000",
	})
}

// Waiting items and claims are found through indexes of their own, so
// that neither a claimed item's versions nor finished rows sit in the path
// of the search for waiting items.
func TestClaimIndexesSplitByState(t *testing.T) {
	requireVersion5Indexes(t, newTestClaimStore(t))
}

// A table of version 4, with items in every state, is migrated to version
// 5 in place: the shared claim index gives way to one per state, the rows
// keep their states and claims, and claims find both waiting items and
// expired claims through the new indexes.
func TestClaimStoreMigratesVersion4TableInPlace(t *testing.T) {
	pool := newPool(t, "lease-claims-test")
	s := claimStoreOnVersion(t, pool, 4, WithClaimTable(`it's "v4" `+uniqueTable()), WithRetention(claim.StandardRetention))
	defs, options := claimIndexes(t, s)
	require.Len(t, defs, 1)
	assert.Contains(t, defs[0], "WHERE (state = ANY (ARRAY[1, 3]))")
	assert.Empty(t, options)
	_, err := s.pool.Exec(ctx, `INSERT INTO `+s.table+` (queue, kind, key, payload, state, attempts, max_attempts, priority, enqueued_at, due, token, owner, dead_at, finished_at)
VALUES ('q', 'k', 'a', 'visible', 1, 0, 3, 1, now(), now(), 0, NULL, NULL, NULL),
       ('q', 'k', NULL, 'claimed', 3, 1, 3, 0, now(), now() + interval '1 hour', 1, 'w', NULL, NULL),
       ('q', 'k', NULL, 'expired', 3, 1, 3, 0, now(), now() - interval '1 second', 1, 'w', NULL, NULL),
       ('q', 'k', NULL, 'dead', 4, 3, 3, 0, now(), now(), 3, 'w', now(), NULL),
       ('q', 'k', NULL, 'done', 5, 1, 3, 0, now(), now(), 1, NULL, NULL, now())`)
	require.NoError(t, err)
	var token int64
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT token FROM "+s.table+" WHERE payload = 'claimed'").Scan(&token))

	require.NoError(t, s.Migrate(ctx))
	requireVersion5Indexes(t, s)
	assert.Equal(t, claim.Counts{Visible: 2, Claimed: 1, Dead: 1, Completed: 1}, counts(t, s, "q"))

	// The expired claim first (priority 0), then the waiting item.
	got := claimN(t, s, "q", "w2", 5)
	require.Len(t, got, 2)
	assert.Equal(t, []byte("expired"), got[0].Payload)
	assert.Equal(t, []byte("visible"), got[1].Payload)
	// The claim made before the migration is still live and fenced.
	items, err := s.List(ctx, claim.Query{Queue: "q", State: claim.Claimed, Limit: 10})
	require.NoError(t, err)
	require.Len(t, items, 3)
	require.Equal(t, []byte("claimed"), items[1].Payload)
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: claim.Ref{Item: items[1].ID, Token: uint64(token)}, How: claim.SettleComplete}))
	for _, c := range got {
		require.NoError(t, s.Settle(ctx, complete(c)))
	}
	assert.Equal(t, claim.Counts{Dead: 1, Completed: 4}, counts(t, s, "q"))
	// New items are claimed through the new index.
	enqueue(t, s, item("q", "new"))
	again := claimN(t, s, "q", "w", 1)
	require.Len(t, again, 1)
	assert.Equal(t, []byte("new"), again[0].Payload)
}

// A claim whose lease expired is claimed again in claim order with the
// waiting items, through its own index, and no more rows are taken than
// the limit, whichever index they came from.
func TestClaimTakesExpiredAndWaitingInOrder(t *testing.T) {
	s := newTestClaimStore(t)
	enqueue(t, s, claim.NewItem{Queue: "q", Payload: []byte("low"), Priority: 2, MaxAttempts: 3},
		claim.NewItem{Queue: "q", Payload: []byte("high"), Priority: 0, MaxAttempts: 3},
		claim.NewItem{Queue: "q", Payload: []byte("mid"), Priority: 1, MaxAttempts: 3})
	first := claimN(t, s, "q", "w", 1)
	require.Len(t, first, 1)
	require.Equal(t, []byte("high"), first[0].Payload)
	_, err := s.pool.Exec(ctx, "UPDATE "+s.table+" SET due = now() - interval '1 second' WHERE id = $1", int64(first[0].Item))
	require.NoError(t, err)

	got := claimN(t, s, "q", "w2", 2)
	require.Len(t, got, 2)
	assert.Equal(t, []byte("high"), got[0].Payload, "the expired claim keeps its priority")
	assert.Equal(t, 2, got[0].Attempt)
	assert.Equal(t, []byte("mid"), got[1].Payload)
	assert.Equal(t, claim.Counts{Visible: 1, Claimed: 2}, counts(t, s, "q"), "the limit bounds both searches together")
}

// An Enqueue larger than one statement judges each key once, by the
// first item with it, as a smaller one does: a later statement of the call
// does not take the key from the item an earlier one added.
func TestClaimStoreKeyStatesAcrossStatements(t *testing.T) {
	s := newTestClaimStore(t)
	keyed := func(payload string, states ...claim.State) claim.NewItem {
		n := item("q", payload)
		n.Key, n.KeyStates = "k", states
		return n
	}
	old := enqueue(t, s, keyed("old"))[0]
	claimN(t, s, "q", "w", 1)
	items := []claim.NewItem{keyed("first", claim.Visible)}
	for range enqueueChunk {
		items = append(items, item("q", "filler"))
	}
	items = append(items, keyed("later", claim.Claimed))
	got := enqueue(t, s, items...)
	assert.NotEqual(t, old.ID, got[0].ID, "the claimed item gives its key up")
	assert.Equal(t, got[0].ID, got[len(got)-1].ID, "the later statement finds the key judged")
	assert.True(t, got[len(got)-1].Duplicate)
	assert.Equal(t, claim.Counts{Visible: enqueueChunk + 1, Claimed: 1}, counts(t, s, "q"))
}
