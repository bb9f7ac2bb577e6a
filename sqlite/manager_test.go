package sqlite_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/sqlite"
)

// lock.Manager over two providers of one file, as two processes would
// have: TryLock refuses while the other holds the lock, DoWait waits and
// gets it, with a greater token, once the other's function returns.
func TestManagerOverProvider(t *testing.T) {
	path := tempFile(t)
	m1, err := lock.NewManager(newProvider(t, path), lock.WithLeaseDuration(10*time.Second))
	require.NoError(t, err)
	m2, err := lock.NewManager(newProvider(t, path), lock.WithLeaseDuration(10*time.Second))
	require.NoError(t, err)

	holding, release := make(chan uint64), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		ok, err := m1.TryLock(t.Context(), "job", func(_ context.Context, l lock.Lease) error {
			holding <- l.Token
			<-release
			return nil
		})
		if err == nil && !ok {
			err = assert.AnError
		}
		done <- err
	}()
	first := <-holding

	ok, err := m2.TryLock(t.Context(), "job", func(context.Context, lock.Lease) error { return nil })
	require.NoError(t, err)
	assert.False(t, ok, "TryLock while the other holds it")

	waited := make(chan lock.Result[uint64], 1)
	go func() {
		r, err := lock.DoWait(t.Context(), m2, "job", func(_ context.Context, l lock.Lease) (uint64, error) {
			return l.Token, nil
		})
		assert.NoError(t, err)
		waited <- r
	}()
	close(release)
	require.NoError(t, <-done)
	r := <-waited
	require.True(t, r.Acquired)
	assert.Greater(t, r.Value, first)
}

// Concurrent writes share transactions: 64 goroutines settling at once
// commit in fewer transactions than calls, and each returns only once its
// transaction committed (its item is gone when it returns).
func TestGroupCommit(t *testing.T) {
	s := newClaimStore(t, tempFile(t))
	const n = 64
	items := make([]claim.NewItem, n)
	for i := range items {
		items[i] = claim.NewItem{Queue: "q", MaxAttempts: 1}
	}
	_, err := s.Enqueue(t.Context(), items)
	require.NoError(t, err)
	claims, err := s.Claim(t.Context(), claim.ClaimRequest{Queue: "q", Owner: "o", Limit: n, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, claims, n)
	before := s.Transactions()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range claims {
		wg.Go(func() {
			<-start
			assert.NoError(t, s.Settle(t.Context(), claim.Settlement{Ref: c.Ref, How: claim.SettleComplete}))
			_, err := s.Lookup(t.Context(), c.Item)
			assert.ErrorIs(t, err, claim.ErrNotFound, "settled before Settle returned")
		})
	}
	close(start)
	wg.Wait()
	commits := s.Transactions() - before
	t.Logf("%d completions in %d transactions", n, commits)
	assert.Less(t, commits, int64(n))
}

// Bad options are refused, naming the field, and create no file.
func TestBadOptions(t *testing.T) {
	for _, tc := range []struct {
		field string
		opt   sqlite.Option
	}{
		{"synchronous", sqlite.WithSynchronous(0)},
		{"poll", sqlite.WithPoll(0)},
		{"busy_timeout", sqlite.WithBusyTimeout(0)},
		{"batch", sqlite.WithBatch(0)},
		{"readers", sqlite.WithReaders(0)},
		{"clock", sqlite.WithClock(nil)},
		{"max_pages", sqlite.WithMaxPages(-1)},
		{"max_pages", sqlite.WithMaxPages(0)},
		{"opts", nil},
	} {
		path := tempFile(t)
		_, err := sqlite.NewClaimStore(t.Context(), path, tc.opt)
		var le *lease.Error
		require.ErrorAs(t, err, &le, tc.field)
		assert.Equal(t, lease.CodeInvalidArgument, le.Code)
		assert.Equal(t, tc.field, le.Field)
		_, err = sqlite.NewLockProvider(t.Context(), path, tc.opt)
		require.ErrorIs(t, err, lease.ErrInvalidArgument, tc.field)
		assert.NoFileExists(t, path)
	}
	_, err := sqlite.NewClaimStore(t.Context(), "")
	require.ErrorIs(t, err, lease.ErrInvalidArgument)
	//lint:ignore SA1012 a nil context is the bad input under test
	_, err = sqlite.NewLockProvider(nil, tempFile(t))
	require.ErrorIs(t, err, lease.ErrInvalidArgument)
}
