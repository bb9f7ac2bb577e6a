package sqlite_test

import (
	"sync/atomic"
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
	s, err := sqlite.NewClaimStore(t.Context(), tempFile(t), sqlite.WithFileReadHook(func() { <-proceed }))
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

// A commit of another store whose write the watch of the file reads
// together with one of this store's own (its goroutine was late, and the
// kernel kept both writes as one) still wakes the waiters of this store at
// once, not at its next poll, an hour here: a write read while or after
// the store wrote may be another's too.
func TestForeignWriteReadWithOwnWakes(t *testing.T) {
	ctx := t.Context()
	held, release := make(chan struct{}), make(chan struct{})
	var holdRead atomic.Bool // the next read of the watch of the file waits for release
	fileRead := func() {
		if holdRead.CompareAndSwap(true, false) {
			held <- struct{}{}
			<-release
		}
	}
	reads, proceed := make(chan struct{}), make(chan struct{})
	var stepping atomic.Bool // each turn of the watcher after reading data_version waits for proceed
	s, other := hookedStores(t, tempFile(t), fileRead, func() {
		if stepping.Load() {
			reads <- struct{}{}
			<-proceed
		}
	})
	read := func(what string) {
		t.Helper()
		select {
		case <-reads:
		case <-time.After(10 * time.Second):
			t.Fatalf("no read of data_version: %s", what)
		}
	}
	stepping.Store(true)
	holdRead.Store(true)

	// A waiter, armed till the end: the watcher keeps watching.
	first, stop := s.Notify("q")
	defer stop()
	// The store's own write: its commit wakes the waiter, and the watch of
	// the file reads the write and waits.
	_, err := s.Enqueue(ctx, noopItems("own", 1))
	require.NoError(t, err)
	<-first
	<-held
	// The watcher sees the commit in data_version as the next waiter
	// arrives, and wakes it.
	second, stop := s.Notify("q")
	defer stop()
	read("a waiter arrived after the store's commit")
	proceed <- struct{}{}
	<-second
	// The next waiter finds the file unchanged; the watcher waits for it
	// to go on.
	ready, stop := s.Notify("q")
	defer stop()
	read("a waiter arrived after the watcher saw the store's commit")
	notWoken(t, ready)

	// Another store commits; the watch of the file goes on, and reads the
	// other's write after the store's own; then the watcher goes on.
	_, err = other.Enqueue(ctx, noopItems("q", 1))
	require.NoError(t, err)
	close(release)
	stepping.Store(false)
	proceed <- struct{}{}
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the other store's commit not seen")
	}
}

// A write of another store that the watch of the file reads while this
// store holds the write lock (the other's commit ended before this store
// took it) wakes the waiters of this store once this store's transaction
// ends, even when that transaction changed nothing and woke no one
// itself; not at the next poll, an hour here.
func TestForeignWriteReadWhileLockedWakes(t *testing.T) {
	ctx := t.Context()
	g := &gate{entered: make(chan string, 1), release: map[string]chan struct{}{"hold": make(chan struct{})},
		fail: map[string]bool{"hold": true}}
	path := gatedFile(t, g)
	held, release, classified := make(chan struct{}), make(chan struct{}), make(chan struct{}, 1)
	var readsSeen atomic.Int32
	versionReads := make(chan struct{}, 100)
	s, other := hookedStores(t, path, func() {
		switch readsSeen.Add(1) {
		case 1: // the first write the watch of the file reads waits
			held <- struct{}{}
			<-release
		case 2:
			classified <- struct{}{}
		}
	}, func() { versionReads <- struct{}{} })
	within := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal(what)
		}
	}

	// A first write of the other store: the watch of the file waits after
	// reading it, and the watcher sees its commit once someone waits.
	_, err := other.Enqueue(ctx, noopItems("x", 1))
	require.NoError(t, err)
	within(held, "the first write not read")
	first, stop := s.Notify("q")
	defer stop()
	within(first, "the first commit not seen")
	within(versionReads, "no read of data_version saw the first commit")
	// A waiter, armed while the file is as the watcher last read it.
	ready, stop := s.Notify("q")
	defer stop()
	within(versionReads, "no read of data_version as the waiter arrived")
	notWoken(t, ready)

	// The other store commits; then this store's write takes the write
	// lock, and waits in its insert while the watch of the file reads the
	// other's write; then it fails, changing nothing.
	_, err = other.Enqueue(ctx, noopItems("q", 1))
	require.NoError(t, err)
	failed := make(chan error, 1)
	go func() {
		_, err := s.Enqueue(ctx, noopItems("hold", 1))
		failed <- err
	}()
	require.Equal(t, "hold", <-g.entered)
	close(release)
	within(classified, "the other store's write not read")
	close(g.release["hold"])
	require.Error(t, <-failed)
	within(ready, "the other store's commit not seen")
}

// notWoken fails the test if ready is closed: its waiter was woken with
// nothing changed.
func notWoken(t *testing.T, ready <-chan struct{}) {
	t.Helper()
	select {
	case <-ready:
		t.Fatal("woken with nothing changed")
	default:
	}
}

// hookedStores opens a store on the file at path that polls once an hour,
// with fileRead and versionRead as its hooks (WithFileReadHook,
// WithVersionReadHook), and another store on the same file.
func hookedStores(t *testing.T, path string, fileRead, versionRead func()) (s, other *sqlite.ClaimStore) {
	t.Helper()
	s, err := sqlite.NewClaimStore(t.Context(), path, sqlite.WithPoll(time.Hour),
		sqlite.WithFileReadHook(fileRead), sqlite.WithVersionReadHook(versionRead))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s, newClaimStore(t, path)
}
