package replicated

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// A directory another node holds open is refused at once with an error
// naming Dir, whether that node runs in this process or in another; once
// the other node is gone, the directory opens.
func TestOpenRefusesDirInUse(t *testing.T) {
	t.Run("same process", func(t *testing.T) {
		dir := t.TempDir()
		first, err := Open(context.Background(), singleConfig(dir, freeAddr(t)))
		require.NoError(t, err)
		defer func() { _ = first.Close() }()
		requireDirInUse(t, dir)
		require.NoError(t, first.Close())
		requireOpens(t, dir)
	})
	t.Run("another process", func(t *testing.T) {
		dir := t.TempDir()
		holder := startChild(t, "hold", helperDirs+"="+dir, helperBinds+"="+freeAddr(t))
		require.Equal(t, "ready", holder.ready(t))
		requireDirInUse(t, dir)
		holder.kill() // the lock dies with the process
		requireOpens(t, dir)
	})
}

func requireDirInUse(t *testing.T, dir string) {
	t.Helper()
	start := time.Now()
	err := requireOpenRefused(t, singleConfig(dir, freeAddr(t)), "Dir")
	assert.Less(t, time.Since(start), 500*time.Millisecond, "refused without waiting for the lock")
	assert.Contains(t, err.Error(), "in use by another node")
}

// requireOpenRefused requires Open to refuse cfg with LS_INVALID_ARGUMENT
// naming field, and returns the error.
func requireOpenRefused(t *testing.T, cfg Config, field string) error {
	t.Helper()
	n, err := Open(context.Background(), cfg)
	if n != nil {
		_ = n.Close()
	}
	require.Nil(t, n)
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, lease.CodeInvalidArgument, le.Code)
	assert.Equal(t, field, le.Field)
	return err
}

func requireOpens(t *testing.T, dir string) {
	t.Helper()
	n, err := Open(context.Background(), singleConfig(dir, freeAddr(t)))
	require.NoError(t, err)
	require.NoError(t, n.Close())
}
