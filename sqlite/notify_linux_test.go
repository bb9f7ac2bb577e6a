package sqlite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/sqlite"
)

// A commit of another store on the file (as of another process) wakes the
// waiters of this one as it lands, not at this one's next poll, which is
// an hour here. This store's own commits, which wake its waiters
// themselves, are not taken for another's.
func TestAnotherStoresCommitWakesAtOnce(t *testing.T) {
	path := tempFile(t)
	waiting := newClaimStore(t, path, sqlite.WithPoll(time.Hour))
	other := newClaimStore(t, path)
	ctx := t.Context()

	for i := range 3 {
		ready, stop := waiting.Notify("q")
		_, err := other.Enqueue(ctx, noopItems("q", 1))
		require.NoError(t, err)
		select {
		case <-ready:
		case <-time.After(10 * time.Second):
			t.Fatalf("commit %d of the other store not seen", i)
		}
		stop()
	}
	foreign := sqlite.ForeignWrites(waiting)

	ready, stop := waiting.Notify("q")
	for range 20 {
		_, err := waiting.Enqueue(ctx, noopItems("own", 1))
		require.NoError(t, err)
	}
	stop()
	<-ready
	assert.LessOrEqual(t, sqlite.ForeignWrites(waiting)-foreign, int64(10), "its own commits are its own")
}

// While no one waits, the watch of the file reads none of the writes
// after the first: a store that only writes, or is idle beside another
// that writes, is not woken by each commit.
func TestWritesUnwatchedWhileNoOneWaits(t *testing.T) {
	path := tempFile(t)
	s := newClaimStore(t, path)
	other := newClaimStore(t, path)
	ctx := t.Context()
	for range 20 {
		_, err := s.Enqueue(ctx, noopItems("q", 1))
		require.NoError(t, err)
		_, err = other.Enqueue(ctx, noopItems("q", 1))
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, sqlite.FileReads(s), int64(1))
	assert.Zero(t, sqlite.ForeignWrites(s))
}

// A write of this store's that the watch of the file reads only after the
// commit ended (its goroutine was late) is still this store's, not
// another process's: the watch looks whether the store wrote since it
// last looked, not only whether it writes now.
func TestOwnWriteReadLateIsOwn(t *testing.T) {
	proceed := make(chan struct{})
	sqlite.SetFileReadHook(func() { <-proceed })
	s, err := sqlite.NewClaimStore(t.Context(), tempFile(t))
	sqlite.SetFileReadHook(nil)
	require.NoError(t, err)
	ready, stop := s.Notify("q")
	_, err = s.Enqueue(t.Context(), noopItems("q", 1))
	require.NoError(t, err)
	<-ready
	close(proceed) // the commit ended: the watch reads its write now
	require.NoError(t, s.Close())
	stop()
	assert.Zero(t, sqlite.ForeignWrites(s))
}
