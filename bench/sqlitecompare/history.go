package sqlitecompare

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

// openOursRetained opens the store on path as openOurs does, keeping
// completed items for claim.StandardRetention (24 hours, as River keeps
// its completed jobs): the store the history measurement compares.
func openOursRetained(ctx context.Context, path string, sync Sync) (System, error) {
	store, err := sqlite.NewClaimStore(ctx, path, sqlite.WithSynchronous(toOurSync(sync)), sqlite.WithRetention(claim.StandardRetention))
	if err != nil {
		return nil, err
	}
	return &ourSystem{store: store, broker: lease.Must(claim.New(store))}, nil
}

// withRetention returns q as the history measurement opens it: ours with
// a retention.
func withRetention(q Queue) Queue {
	if q.Name == OursName {
		q.Open = openOursRetained
	}
	return q
}

// recursiveSeries is a common table expression g(n) of the numbers 1 to
// the statement's first argument.
const recursiveSeries = `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?) `

// fillOurs adds n items of the measured queue completed within the last
// hour, as the store's completion leaves them with a retention (state 5,
// finished_at set, no owner; times in Unix nanoseconds).
func fillOurs(ctx context.Context, db *sql.DB, n int) error {
	_, err := db.ExecContext(ctx, recursiveSeries+`INSERT INTO lease_claims (queue, state, attempts, max_attempts, priority, enqueued_at, due, finished_at)
SELECT ?, 5, 1, 25, 0, f - 60000000000, f - 60000000000, f FROM (SELECT ? - (n % 3600) * 1000000000 AS f FROM g)`,
		n, ourQueue, time.Now().UnixNano())
	return err
}

// fillRiver adds n jobs completed within the last hour to river_job, as
// River's completer leaves them (times in the driver's text format).
func fillRiver(ctx context.Context, db *sql.DB, n int) error {
	_, err := db.ExecContext(ctx, recursiveSeries+`INSERT INTO river_job (attempt, attempted_at, created_at, finalized_at, kind, queue, scheduled_at, state)
SELECT 1, f, f, f, 'sqlitecompare_noop', 'default', f, 'completed'
FROM (SELECT strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || (n % 3600) || ' seconds') AS f FROM g)`, n)
	return err
}

// loadHistory fills the template file of q at path with n finished items
// in one statement, then ANALYZEs it and checkpoints its log, so that
// every copy of the template starts with that history and statistics
// that know it. It returns how long that took.
func loadHistory(ctx context.Context, cfg Config, q Queue, path string, n int) (d time.Duration, err error) {
	if q.FillHistory == nil {
		return 0, nil
	}
	db, err := openDB(ctx, path, cfg.Sync)
	if err != nil {
		return 0, fmt.Errorf("open: %w", err)
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	t0 := time.Now()
	if err := q.FillHistory(ctx, db, n); err != nil {
		return 0, fmt.Errorf("fill: %w", err)
	}
	for _, stmt := range []string{"ANALYZE", "PRAGMA wal_checkpoint(TRUNCATE)"} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return 0, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return time.Since(t0), nil
}

// WriteHistoryMarkdown writes, for reports of one configuration measured
// with different Config.History, a table per queue of how each figure's
// median changes with the history: one column a size, and beside the
// largest its ratio to the smallest.
func WriteHistoryMarkdown(w io.Writer, reps []*Report) error {
	if len(reps) == 0 {
		return nil
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "What each queue keeps of the items it finished, and so holds as history:")
	fmt.Fprintln(bw)
	for _, col := range reps[0].Columns {
		if q, ok := queueByName(col.Queue); ok {
			fmt.Fprintf(bw, "- %s: %s.\n", q.Name, q.Keeps)
		}
	}
	for ci, col := range reps[0].Columns {
		fmt.Fprintf(bw, "\n%s:\n\n| figure |", col.Queue)
		for _, r := range reps {
			fmt.Fprintf(bw, " %d rows |", r.Config.History)
		}
		fmt.Fprintf(bw, " largest / smallest |\n|---|%s--:|\n", strings.Repeat("--:|", len(reps)))
		for _, rw := range reps[0].rows() {
			fmt.Fprintf(bw, "| %s |", rw.name)
			for _, r := range reps {
				fmt.Fprintf(bw, " %s |", rw.text(r.Columns[ci].Median))
			}
			ratio := "–"
			first, last := rw.value(reps[0].Columns[ci].Median), rw.value(reps[len(reps)-1].Columns[ci].Median)
			if first > 0 {
				ratio = fmt.Sprintf("%.2f×", last/first)
			}
			fmt.Fprintf(bw, " %s |\n", ratio)
		}
	}
	return bw.Flush()
}
