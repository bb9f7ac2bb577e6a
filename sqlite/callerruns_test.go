package sqlite_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

// One goroutine enqueueing one item per call commits each call on its own
// goroutine: with no other write under way, nothing could share the
// commit, and handing the write to the committer's goroutine and the
// answer back would cost two wake-ups a call. Each call is one commit.
func TestLoneCallerCommitsOnItsGoroutine(t *testing.T) {
	s := newClaimStore(t, tempFile(t))
	ctx := t.Context()
	const n = 50
	all0, byCaller0 := sqlite.Batches(s)
	commits0 := s.Transactions()
	for range n {
		_, err := s.Enqueue(ctx, noopItems("q", 1))
		require.NoError(t, err)
	}
	all, byCaller := sqlite.Batches(s)
	assert.EqualValues(t, n, s.Transactions()-commits0, "one commit a call")
	assert.EqualValues(t, n, all-all0, "one batch a call")
	assert.EqualValues(t, n, byCaller-byCaller0, "every batch on its caller's goroutine")
}

// A lone caller whose context ends while its write waits for the write
// lock (held by another connection) gets its context's error, and its
// write is not in the file, not even once the lock is free: the wait, on
// its own goroutine, ends with its context (not after the busy timeout),
// before the write began.
func TestLoneCallerGivesUpWaitingForTheLock(t *testing.T) {
	path := tempFile(t)
	s := newClaimStore(t, path)
	ctx := t.Context()
	other, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer other.Close()
	holder, err := other.Conn(ctx)
	require.NoError(t, err)
	defer holder.Close()
	_, err = holder.ExecContext(ctx, "BEGIN IMMEDIATE")
	require.NoError(t, err)

	giveUp, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = s.Enqueue(giveUp, []claim.NewItem{{Queue: "q", Key: "gave up", MaxAttempts: 1}})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), sqlite.DefaultBusyTimeout/2, "it stopped waiting as its context ended")

	_, err = holder.ExecContext(ctx, "ROLLBACK")
	require.NoError(t, err)
	_, err = s.Enqueue(ctx, []claim.NewItem{{Queue: "q", Key: "next", MaxAttempts: 1}})
	require.NoError(t, err)
	items, err := s.List(ctx, claim.Query{Queue: "q", Limit: 10})
	require.NoError(t, err)
	require.Len(t, items, 1, "the write that gave up is not in the file")
	assert.Equal(t, "next", items[0].Key)
}

// A lone caller whose context ends once its write has begun waits for
// the commit and reports it: its write is in the file, and it says so.
func TestLoneCallerLearnsItsCommit(t *testing.T) {
	g := &gate{entered: make(chan string, 1), release: map[string]chan struct{}{"slow": make(chan struct{})}}
	s := gatedStore(t, g)
	ctx := t.Context()
	giveUp, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.Enqueue(giveUp, []claim.NewItem{{Queue: "slow", MaxAttempts: 1}})
		done <- err
	}()
	require.Equal(t, "slow", <-g.entered)
	cancel()
	close(g.release["slow"])
	require.NoError(t, <-done, "the write committed")
	c, err := s.Counts(ctx, "slow")
	require.NoError(t, err)
	assert.Equal(t, 1, c.Visible)
	_, byCaller := sqlite.Batches(s)
	assert.Positive(t, byCaller)
}
