package sqlite_test

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

// fillFinished adds n items of queue completed within the hour before
// epoch to the file at path, in one statement, as a day of retention
// keeps them.
func fillFinished(t testing.TB, path, queue string, n int) {
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer func() { _ = raw.Close() }()
	_, err = raw.Exec(`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < :n)
INSERT INTO lease_claims (queue, state, attempts, max_attempts, priority, enqueued_at, due, finished_at)
SELECT :queue, 5, 1, 25, 0, f - 60000000000, f - 60000000000, f
FROM (SELECT :epoch - (n % 3600) * 1000000000 AS f FROM g)`,
		sql.Named("n", n), sql.Named("queue", queue), sql.Named("epoch", epoch.UnixNano()))
	require.NoError(t, err)
}

// BenchmarkInspectHistory times Counts of the queue holding n finished
// items, Counts of a queue of one waiting item beside them, and Queues,
// on a file whose store keeps finished items a day.
func BenchmarkInspectHistory(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		path := tempFile(b)
		keep := sqlite.WithRetention(claim.StandardRetention)
		s := newClaimStore(b, path, keep)
		require.NoError(b, s.Close())
		fillFinished(b, path, "history", n)
		s = newClaimStore(b, path, keep)
		_, err := s.Enqueue(b.Context(), []claim.NewItem{{Queue: "small", MaxAttempts: 1}})
		require.NoError(b, err)
		calls := map[string]func() error{
			"counts-history": func() error { _, err := s.Counts(b.Context(), "history"); return err },
			"counts-small":   func() error { _, err := s.Counts(b.Context(), "small"); return err },
			"queues":         func() error { _, err := s.Queues(b.Context(), claim.QueueQuery{Limit: 100}); return err },
		}
		for _, name := range []string{"counts-history", "counts-small", "queues"} {
			b.Run(fmt.Sprintf("finished=%d/%s", n, name), func(b *testing.B) {
				for b.Loop() {
					require.NoError(b, calls[name]())
				}
			})
		}
	}
}
