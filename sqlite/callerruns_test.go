package sqlite_test

import (
	"context"
	"database/sql"
	"sync"
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
	unlock := holdWriteLock(t, path)

	giveUp, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Enqueue(giveUp, []claim.NewItem{{Queue: "q", Key: "gave up", MaxAttempts: 1}})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), sqlite.DefaultBusyTimeout/2, "it stopped waiting as its context ended")

	unlock()
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

// A write that finds the write lock held by another connection (another
// process's write) looks again within a fraction of a millisecond, on the
// store's own schedule, rather than sleeping in SQLite's busy handler (a
// millisecond, two, five, then longer), and goes on once the lock is free.
// The busy timeout here is a minute: a wait inside SQLite would not come
// back before the end of the test.
func TestWriteLooksAgainForTheLockSoon(t *testing.T) {
	busy := make(chan struct{}, 100)
	path := tempFile(t)
	s := newClaimStore(t, path, sqlite.WithBusyTimeout(time.Minute), sqlite.WithLockBusyHook(func() {
		select {
		case busy <- struct{}{}:
		default:
		}
	}))
	ctx := t.Context()
	unlock := holdWriteLock(t, path)

	done := make(chan error, 1)
	go func() {
		_, err := s.Enqueue(ctx, noopItems("q", 1))
		done <- err
	}()
	for i := range 3 {
		select {
		case <-busy:
		case <-time.After(10 * time.Second):
			t.Fatalf("attempt %d to take the lock not made", i+2)
		}
	}
	unlock()
	require.NoError(t, <-done)
	c, err := s.Counts(ctx, "q")
	require.NoError(t, err)
	assert.Equal(t, 1, c.Visible)

	var waited time.Duration
	for n := range 8 {
		d := sqlite.LockRetryAfter(n)
		assert.LessOrEqual(t, d, time.Millisecond/2, "attempt %d", n)
		waited += d
	}
	assert.Less(t, waited, 4*time.Millisecond, "eight attempts within 4ms (SQLite's busy handler makes three in 8ms)")
}

// holdWriteLock takes the write lock of the file at path on a connection
// of its own, as another process's write would hold it, until the
// returned function (or the end of the test) rolls it back.
func holdWriteLock(t *testing.T, path string) (unlock func()) {
	t.Helper()
	other, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Close() })
	holder, err := other.Conn(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() { _ = holder.Close() })
	_, err = holder.ExecContext(t.Context(), "BEGIN IMMEDIATE")
	require.NoError(t, err)
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			_, err := holder.ExecContext(context.Background(), "ROLLBACK")
			require.NoError(t, err)
		})
	}
	t.Cleanup(unlock)
	return unlock
}
