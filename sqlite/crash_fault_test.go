package sqlite_test

import (
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

const (
	crashQueue   = "crash"
	crashChunk   = 5
	crashWriters = 16
)

func init() {
	children["enqueuer"] = enqueueForever
}

// enqueueForever enqueues chunks of keyed items from many goroutines at
// once, so that their enqueues share commits, and says "acked CHUNK" once
// a chunk's Enqueue returned, until it is killed.
func enqueueForever(args []string) error {
	ctx, cancel := childContext()
	defer cancel()
	s, err := sqlite.NewClaimStore(ctx, args[0])
	if err != nil {
		return err
	}
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, crashWriters)
	for g := range crashWriters {
		wg.Go(func() {
			for n := 0; ; n++ {
				chunk := fmt.Sprintf("g%d-c%d", g, n)
				items := make([]claim.NewItem, crashChunk)
				for i := range items {
					items[i] = claim.NewItem{Queue: crashQueue, Key: fmt.Sprintf("%s-i%d", chunk, i), MaxAttempts: 1}
				}
				if _, err := s.Enqueue(ctx, items); err != nil {
					errs <- err
					return
				}
				say("acked %s", chunk)
			}
		})
	}
	wg.Wait()
	return <-errs
}

// TestKillDuringGroupCommit: a process enqueuing from 16 goroutines (their
// writes sharing transactions) is killed with SIGKILL while commits are
// under way. The file opens cleanly, passes SQLite's integrity check, and
// holds every acknowledged chunk whole; any chunk stored but not
// acknowledged (its commit landed as the process died) is whole too:
// nothing is half-written.
func TestKillDuringGroupCommit(t *testing.T) {
	t.Parallel()
	path := tempFile(t)
	c := startChild(t, "enqueuer", path)
	acked := map[string]bool{}
	for len(acked) < 100 {
		acked[c.expect(t, "acked ", 60*time.Second)] = true
	}
	c.kill()
	for l := range c.lines {
		if chunk, ok := strings.CutPrefix(l, "acked "); ok {
			acked[chunk] = true
		}
	}

	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	var check string
	require.NoError(t, db.QueryRow("PRAGMA integrity_check").Scan(&check))
	require.NoError(t, db.Close())
	require.Equal(t, "ok", check)

	s := newClaimStore(t, path)
	stored := map[string]int{}
	var after claim.ItemID
	for {
		items, err := s.List(t.Context(), claim.Query{Queue: crashQueue, After: after, Limit: 1000})
		require.NoError(t, err)
		if len(items) == 0 {
			break
		}
		for _, it := range items {
			chunk := it.Key[:strings.LastIndex(it.Key, "-")]
			stored[chunk]++
			after = it.ID
		}
	}
	for chunk := range acked {
		assert.Equal(t, crashChunk, stored[chunk], "acknowledged chunk %s", chunk)
	}
	extra := 0
	for chunk, n := range stored {
		assert.Equal(t, crashChunk, n, "chunk %s is half-written", chunk)
		if !acked[chunk] {
			extra++
		}
	}
	t.Logf("%d chunks acknowledged, %d more stored unacknowledged (committed as the process died)", len(acked), extra)
	assert.LessOrEqual(t, extra, crashWriters, "at most one batch's chunks may be stored unacknowledged")
}
