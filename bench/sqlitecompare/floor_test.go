package sqlitecompare

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCommitFloor(t *testing.T) {
	for _, s := range []Sync{SyncFull, SyncNormal} {
		r, err := CommitFloor(context.Background(), t.TempDir(), s, 2*time.Second)
		require.NoError(t, err)
		t.Logf("%s: %.0f commits/s", s, r)
	}
}
