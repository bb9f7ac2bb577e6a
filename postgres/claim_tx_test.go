package postgres

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// An enqueue in a transaction that rolls back leaves nothing behind.
func TestClaimStoreEnqueueTxRollbackLeavesNothing(t *testing.T) {
	s := newTestClaimStore(t)
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	got, err := s.EnqueueTx(ctx, tx, []claim.NewItem{item("q", "a"), item("q", "b")})
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.NoError(t, tx.Rollback(ctx))
	assert.Equal(t, claim.Counts{}, counts(t, s, "q"))
	_, err = s.Lookup(ctx, got[0].ID)
	require.ErrorIs(t, err, claim.ErrNotFound)
	assert.Empty(t, claimN(t, s, "q", "w", 10))
}

// An enqueue in a transaction is invisible until the commit, which makes
// it claimable and wakes a worker waiting in another process, and only
// then.
func TestClaimStoreEnqueueTxCommitWakesWaiter(t *testing.T) {
	s := newTestClaimStore(t)
	other := secondStore(t, s, "lease-claims-other", WithClaimPoll(time.Hour))
	ready, stop := other.Notify("q")
	<-ready // the listener's start
	stop()
	ready, stop = other.Notify("q")
	defer stop()

	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	got, err := s.EnqueueTx(ctx, tx, []claim.NewItem{item("q", "in tx")})
	require.NoError(t, err)
	assert.Empty(t, claimN(t, other, "q", "w", 1), "not claimable before the commit")
	// Notifications arrive in commit order: once one sent after the
	// enqueue arrived, a notification the enqueue sent would have too.
	synced, stopSync := other.Notify("sync")
	defer stopSync()
	enqueue(t, s, item("sync", "after the enqueue"))
	<-synced
	select {
	case <-ready:
		t.Fatal("a waiter was woken before the commit")
	default:
	}
	require.NoError(t, tx.Commit(ctx))
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the commit did not wake the waiter")
	}
	cs := claimN(t, other, "q", "w", 1)
	require.Len(t, cs, 1)
	assert.Equal(t, got[0].ID, cs[0].Item)
}

// A completion in a transaction that rolls back leaves the claim live; one
// that commits completes the item together with the handler's own write.
func TestClaimStoreCompleteTx(t *testing.T) {
	s := newTestClaimStore(t, WithClaimRetention(claim.StandardRetention))
	side := uniqueTable()
	_, err := s.pool.Exec(ctx, "CREATE TABLE "+side+" (note text)")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = s.pool.Exec(ctx, "DROP TABLE "+side) })
	enqueue(t, s, item("q", "job"))
	c := claimN(t, s, "q", "w", 1)[0]

	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "INSERT INTO "+side+" VALUES ('rolled back')")
	require.NoError(t, err)
	require.NoError(t, s.CompleteTx(ctx, tx, c.Ref))
	require.NoError(t, tx.Rollback(ctx))
	assert.Equal(t, claim.Claimed, lookup(t, s, c.Item).State, "the rolled-back completion left the claim live")
	_, err = s.Extend(ctx, c.Ref, time.Minute)
	require.NoError(t, err)

	tx, err = s.pool.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "INSERT INTO "+side+" VALUES ('committed')")
	require.NoError(t, err)
	require.NoError(t, s.CompleteTx(ctx, tx, c.Ref))
	assert.Equal(t, claim.Claimed, lookup(t, s, c.Item).State, "nothing shows before the commit")
	require.NoError(t, tx.Commit(ctx))
	assert.Equal(t, claim.Completed, lookup(t, s, c.Item).State)
	var notes []string
	rows, err := s.pool.Query(ctx, "SELECT note FROM "+side)
	require.NoError(t, err)
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		notes = append(notes, n)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"committed"}, notes)
	requireStale(t, s.Settle(ctx, complete(c)))
}

// CompleteTx of a claim that is no longer live is stale and leaves the
// caller's transaction usable; the item's new claim is untouched.
func TestClaimStoreCompleteTxStale(t *testing.T) {
	s := newTestClaimStore(t)
	enqueue(t, s, item("q", "job"))
	old := claimN(t, s, "q", "w", 1)[0]
	expire(t, s, old.Item, time.Second)
	fresh := claimN(t, s, "q", "v", 1)[0]

	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	requireStale(t, s.CompleteTx(ctx, tx, old.Ref))
	var one int
	require.NoError(t, tx.QueryRow(ctx, "SELECT 1").Scan(&one), "the transaction is still usable")
	require.NoError(t, tx.Commit(ctx))
	assert.Equal(t, claim.Claimed, lookup(t, s, fresh.Item).State)
	require.NoError(t, s.Settle(ctx, complete(fresh)))
}

// A transaction already ended, or none, is bad input naming "tx", and
// nothing changes.
func TestClaimStoreTxClosedOrNil(t *testing.T) {
	s := newTestClaimStore(t)
	enqueue(t, s, item("q", "job"))
	c := claimN(t, s, "q", "w", 1)[0]
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	_, err = s.EnqueueTx(ctx, tx, []claim.NewItem{item("q", "late")})
	requireInvalid(t, err, "tx")
	requireInvalid(t, s.CompleteTx(ctx, tx, c.Ref), "tx")
	_, err = s.EnqueueTx(ctx, nil, []claim.NewItem{item("q", "none")})
	requireInvalid(t, err, "tx")
	requireInvalid(t, s.CompleteTx(ctx, nil, c.Ref), "tx")
	assert.Equal(t, claim.Counts{Claimed: 1}, counts(t, s, "q"))
	require.NoError(t, s.Settle(ctx, complete(c)), "the claim is still live")
}
