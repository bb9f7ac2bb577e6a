package sqlite_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

// requireStorage checks that err is a storage *lease.Error matching kind.
func requireStorage(t *testing.T, err error, kind error) {
	t.Helper()
	require.Error(t, err)
	var le *lease.Error
	require.True(t, errors.As(err, &le), "%v is not a *lease.Error", err)
	assert.Equal(t, lease.CodeStorage, le.Code, "%v", err)
	assert.ErrorIs(t, err, lease.ErrStorage)
	assert.ErrorIs(t, err, kind)
	assert.Contains(t, err.Error(), "sqlite: ")
	t.Log(err)
}

// readOnlyDir makes dir unwritable, even for root (which ignores the
// permission bits): with chattr +i when run as root.
func readOnlyDir(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		require.NoError(t, os.Chmod(dir, 0o555))
		t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
		return
	}
	out, err := exec.Command("chattr", "+i", dir).CombinedOutput()
	require.NoError(t, err, "chattr +i: %s", out)
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", dir).Run() })
}

// A new file in a directory that cannot be written: a storage error
// saying the file cannot be opened, and no file.
func TestReadOnlyDirectory(t *testing.T) {
	dir := t.TempDir()
	readOnlyDir(t, dir)
	path := filepath.Join(dir, "lease.db")
	_, err := sqlite.NewClaimStore(t.Context(), path)
	requireStorage(t, err, sqlite.ErrCannotOpen)
	_, err = sqlite.NewLockProvider(t.Context(), path)
	requireStorage(t, err, sqlite.ErrCannotOpen)
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
	readOnlyDir(t, dir)
	_, err = sqlite.NewClaimStore(t.Context(), path)
	require.Error(t, err)
	requireStorage(t, err, lease.ErrStorage)
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
	requireStorage(t, err, sqlite.ErrNotDatabase)
	_, err = sqlite.NewLockProvider(t.Context(), path)
	requireStorage(t, err, sqlite.ErrNotDatabase)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, text, got)
}

// A database whose pages were overwritten: ErrCorrupt from the call that
// reads them (or from opening, when the schema is hit).
func TestCorruptFile(t *testing.T) {
	path := tempFile(t)
	s := newClaimStore(t, path)
	var items []claim.NewItem
	for range 200 {
		items = append(items, claim.NewItem{Queue: "q", Payload: bytes.Repeat([]byte("p"), 500), MaxAttempts: 1})
	}
	_, err := s.Enqueue(t.Context(), items)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	// Fold the log into the file, then scribble over every page but the
	// first (the header and the schema's root).
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	info, err := f.Stat()
	require.NoError(t, err)
	junk := bytes.Repeat([]byte{0xa5}, int(info.Size())-4096)
	_, err = f.WriteAt(junk, 4096)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	s2, err := sqlite.NewClaimStore(t.Context(), path)
	if err == nil {
		t.Cleanup(func() { _ = s2.Close() })
		_, err = s2.List(t.Context(), claim.Query{Queue: "q", Limit: 1000})
	}
	requireStorage(t, err, sqlite.ErrCorrupt)
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
	requireStorage(t, err, sqlite.ErrFull)
	counts, err := s.Counts(t.Context(), "q")
	require.NoError(t, err)
	assert.Equal(t, stored, counts.Visible, "the failed enqueue stored nothing")
	_, err = s.Enqueue(t.Context(), []claim.NewItem{{Queue: "q", Payload: []byte("small"), MaxAttempts: 1}})
	require.NoError(t, err, "a write that fits still works")
}
