package sqlite_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

// requireStorage checks that err is a storage *lease.Error matching kind,
// that reads as docs/errors.md says (the package first, the code last)
// and names the file at path.
func requireStorage(t *testing.T, err error, kind error, path string) {
	t.Helper()
	require.Error(t, err)
	var le *lease.Error
	require.True(t, errors.As(err, &le), "%v is not a *lease.Error", err)
	assert.Equal(t, lease.CodeStorage, le.Code, "%v", err)
	assert.ErrorIs(t, err, lease.ErrStorage)
	assert.ErrorIs(t, err, kind)
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, "sqlite: "), "%q does not start with the package", msg)
	assert.NotContains(t, msg, "sqlite: sqlite:")
	assert.True(t, strings.HasSuffix(msg, " [LS_STORAGE]"), "%q does not end with the code", msg)
	assert.Contains(t, msg, path, "the file is not named")
	if kind != lease.ErrStorage {
		assert.Contains(t, msg, strings.TrimPrefix(kind.Error(), "sqlite: "))
	}
	t.Log(err)
}

// readOnly makes the file or directory at path unwritable, even for root
// (which ignores the permission bits): with chattr +i when run as root.
func readOnly(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		info, err := os.Stat(path)
		require.NoError(t, err)
		require.NoError(t, os.Chmod(path, 0o555))
		t.Cleanup(func() { _ = os.Chmod(path, info.Mode().Perm()) })
		return
	}
	out, err := exec.Command("chattr", "+i", path).CombinedOutput()
	require.NoError(t, err, "chattr +i: %s", out)
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", path).Run() })
}

// A new file in a directory that cannot be written: a storage error
// saying the file cannot be opened, and no file.
func TestReadOnlyDirectory(t *testing.T) {
	dir := t.TempDir()
	readOnly(t, dir)
	path := filepath.Join(dir, "lease.db")
	_, err := sqlite.NewClaimStore(t.Context(), path)
	requireStorage(t, err, sqlite.ErrCannotOpen, path)
	_, err = sqlite.NewLockProvider(t.Context(), path)
	requireStorage(t, err, sqlite.ErrCannotOpen, path)
	_, statErr := os.Stat(path)
	assert.ErrorIs(t, statErr, os.ErrNotExist)
}

// An existing file whose directory became read-only: the write-ahead log
// cannot be made, so opening it fails with a storage error, and the file
// is as it was.
func TestReadOnlyExistingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lease.db")
	s := newClaimStore(t, path)
	_, err := s.Enqueue(t.Context(), []claim.NewItem{{Queue: "q", MaxAttempts: 1}})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	readOnly(t, dir)
	_, err = sqlite.NewClaimStore(t.Context(), path)
	require.Error(t, err)
	requireStorage(t, err, lease.ErrStorage, path)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(before, after), "the file changed")
}

// A file that is not an SQLite database: ErrNotDatabase, and the file
// untouched.
func TestNotADatabase(t *testing.T) {
	path := tempFile(t)
	text := bytes.Repeat([]byte("this is not a database\n"), 400)
	require.NoError(t, os.WriteFile(path, text, 0o600))
	_, err := sqlite.NewClaimStore(t.Context(), path)
	requireStorage(t, err, sqlite.ErrNotDatabase, path)
	_, err = sqlite.NewLockProvider(t.Context(), path)
	requireStorage(t, err, sqlite.ErrNotDatabase, path)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, text, got)
}

// damage writes a file at path with 200 items of queue "q", closes it
// (which folds the log into the file), and scribbles over the file from
// the offset from returns for the file's size to its end.
func damage(t *testing.T, path string, from func(size int64) int64) {
	t.Helper()
	s := newClaimStore(t, path)
	var items []claim.NewItem
	for range 200 {
		items = append(items, claim.NewItem{Queue: "q", Payload: bytes.Repeat([]byte("p"), 500), MaxAttempts: 1})
	}
	_, err := s.Enqueue(t.Context(), items)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	info, err := f.Stat()
	require.NoError(t, err)
	off := from(info.Size())
	_, err = f.WriteAt(bytes.Repeat([]byte{0xa5}, int(info.Size()-off)), off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// A database whose pages were overwritten: ErrCorrupt from the call that
// reads them (or from opening, when the schema is hit).
func TestCorruptFile(t *testing.T) {
	path := tempFile(t)
	// Every page but the first (the header and the schema's root).
	damage(t, path, func(int64) int64 { return 4096 })
	s2, err := sqlite.NewClaimStore(t.Context(), path)
	if err == nil {
		t.Cleanup(func() { _ = s2.Close() })
		_, err = s2.List(t.Context(), claim.Query{Queue: "q", Limit: 1000})
	}
	requireStorage(t, err, sqlite.ErrCorrupt, path)
}

// A full file (the page cap of WithMaxPages standing in for a full disk):
// the Enqueue that does not fit fails with ErrFull and stores nothing; the
// store goes on serving reads and smaller writes.
func TestFullFile(t *testing.T) {
	path := tempFile(t)
	s := newClaimStore(t, path, sqlite.WithMaxPages(64))
	big := bytes.Repeat([]byte("x"), 32<<10)
	var err error
	stored := 0
	for range 100 {
		if _, err = s.Enqueue(t.Context(), []claim.NewItem{{Queue: "q", Payload: big, MaxAttempts: 1}}); err != nil {
			break
		}
		stored++
	}
	requireStorage(t, err, sqlite.ErrFull, path)
	counts, err := s.Counts(t.Context(), "q")
	require.NoError(t, err)
	assert.Equal(t, stored, counts.Visible, "the failed enqueue stored nothing")
	_, err = s.Enqueue(t.Context(), []claim.NewItem{{Queue: "q", Payload: []byte("small"), MaxAttempts: 1}})
	require.NoError(t, err, "a write that fits still works")
}

// A file whose data pages were damaged after the store opened it: the
// call that reads them (Queues, which reads the queues it lists)
// gets ErrCorrupt naming the file.
func TestCorruptPageReadByCall(t *testing.T) {
	path := tempFile(t)
	// The schema and the tables' first pages stay; the rows' pages, at
	// the end of the file, are overwritten.
	damage(t, path, func(size int64) int64 { return size / 2 / 4096 * 4096 })
	s := newClaimStore(t, path)
	_, err := s.Queues(t.Context(), claim.QueueQuery{Limit: 10})
	requireStorage(t, err, sqlite.ErrCorrupt, path)
}

// A file that cannot be written any more while the store has it open
// (immutable; a file system remounted read-only fails the same way): the
// write gets an I/O storage error naming the file, and nothing of it is
// written; the store goes on serving reads.
func TestUnwritableFileAtWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lease.db")
	s := newClaimStore(t, path)
	_, err := s.Enqueue(t.Context(), []claim.NewItem{{Queue: "q", MaxAttempts: 1}})
	require.NoError(t, err)
	// The shared-memory file stays writable: SQLite maps it into memory,
	// and a store of a mapped page of an immutable file is a fault that
	// ends the process (any SQLite's), not an error a call can return.
	for _, p := range []string{path, path + "-wal"} {
		readOnly(t, p)
	}
	_, err = s.Enqueue(t.Context(), []claim.NewItem{{Queue: "q", MaxAttempts: 1}, {Queue: "q", MaxAttempts: 1}})
	requireStorage(t, err, lease.ErrStorage, path)
	counts, err := s.Counts(t.Context(), "q")
	require.NoError(t, err)
	assert.Equal(t, 1, counts.Visible, "nothing of the failed write is in the file")
}

// An existing file that cannot be written, in a directory that can: the
// store opens it (its schema is up to date: opening writes nothing) and
// serves reads; a write gets ErrReadOnly naming the file, and the file is
// unchanged.
func TestReadOnlyFile(t *testing.T) {
	path := tempFile(t)
	s := newClaimStore(t, path)
	_, err := s.Enqueue(t.Context(), []claim.NewItem{{Queue: "q", MaxAttempts: 1}})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	readOnly(t, path)
	s = newClaimStore(t, path)
	_, err = s.Enqueue(t.Context(), []claim.NewItem{{Queue: "q", MaxAttempts: 1}})
	requireStorage(t, err, sqlite.ErrReadOnly, path)
	counts, err := s.Counts(t.Context(), "q")
	require.NoError(t, err)
	assert.Equal(t, 1, counts.Visible)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(before, after), "the file changed")
}
