package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// A read whose transaction began before an item enqueued visible was
// committed, but whose snapshot holds the item, finds it visible, as it
// always was: the read compares due times with a clock read after its
// snapshot, not with its transaction's start. A statement of its own
// runs so whenever another commits between its start and its snapshot;
// a transaction begun first stretches that moment out.
func TestReadsCompareDueTimesAfterTheirSnapshot(t *testing.T) {
	s := newTestClaimStore(t)
	tx, err := s.pool.Begin(ctx) // now() is fixed from here
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, "SELECT now()")
	require.NoError(t, err)
	it := enqueue(t, s, item("q", "x"))[0]

	var c claim.Counts
	require.NoError(t, tx.QueryRow(ctx, s.sql.counts, "q").Scan(&c.Visible, &c.Delayed, &c.Claimed, &c.Dead, &c.Completed, &c.Cancelled))
	assert.Equal(t, claim.Counts{Visible: 1}, c, "Counts")

	rows, err := tx.Query(ctx, s.sql.queues, s.table, "", 10)
	require.NoError(t, err)
	qs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (claim.Counts, error) {
		var (
			name string
			c    claim.Counts
			at   any
		)
		err := r.Scan(&name, &c.Visible, &c.Delayed, &c.Claimed, &c.Dead, &c.Completed, &c.Cancelled, &at)
		return c, err
	})
	require.NoError(t, err)
	assert.Equal(t, []claim.Counts{{Visible: 1}}, qs, "Queues")

	rows, err = tx.Query(ctx, s.sql.list, "q", int32(claim.Visible), int64(0), 10, "", "")
	require.NoError(t, err)
	listed := 0
	for rows.Next() {
		listed++
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, 1, listed, "List of the visible items")

	var r itemRow
	require.NoError(t, tx.QueryRow(ctx, s.sql.lookup, int64(it.ID)).Scan(r.dest()...))
	looked, err := r.item()
	require.NoError(t, err)
	assert.Equal(t, claim.Visible, looked.State, "Lookup")
}
