package sqlitecompare

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommitFloorTwiceInOneDir checks that each measurement of the floor
// gets a fresh file: every run of Measure measures it in the same
// directory.
func TestCommitFloorTwiceInOneDir(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []Sync{SyncFull, SyncNormal, SyncFull} {
		r, err := CommitFloor(context.Background(), dir, s, 20*time.Millisecond)
		require.NoError(t, err, s)
		assert.Positive(t, r, s)
	}
}
