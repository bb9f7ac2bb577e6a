package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// With no file given, the example enqueues 20 items on a file of its own
// and two workers finish them.
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), "", 0, "", time.Millisecond, &out))
	require.Equal(t, "enqueued 20 items on thumbnails\n20 items finished by 2 workers; the queue is empty\n", out.String())
}

// A producer run and two worker runs on one file, as separate processes
// would do it: the items are in the file between the runs.
func TestProducerThenWorkers(t *testing.T) {
	db := filepath.Join(t.TempDir(), "queue.db")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), db, 30, "", 0, &out))
	require.Equal(t, "enqueued 30 items on thumbnails\n", out.String())
	out.Reset()
	require.NoError(t, run(context.Background(), db, 0, "alice", time.Millisecond, &out))
	require.Equal(t, "30 items finished by 1 workers; the queue is empty\n", out.String())
	out.Reset()
	require.NoError(t, run(context.Background(), db, 0, "bob", time.Millisecond, &out))
	require.Equal(t, "0 items finished by 1 workers; the queue is empty\n", out.String())
}
