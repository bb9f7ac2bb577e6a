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
	db, err := openDB(ctx, path, sync)
	if err != nil {
		return nil, errors.Join(err, store.Close())
	}
	return &retainedSystem{ourSystem: &ourSystem{store: store, broker: lease.Must(claim.New(store))}, db: db}, nil
}

// retainedSystem is ours with a retention, and a connection of its own
// on the file for Settled.
type retainedSystem struct {
	*ourSystem
	db *sql.DB
}

// liveItems says whether the measured queue has an item waiting or
// claimed, through the claim index (over those states only).
const liveItems = `SELECT EXISTS (SELECT 1 FROM lease_claims WHERE queue = ? AND state IN (1, 3))`

// Settled polls the file until no item of the queue is left waiting or
// claimed. It does not ask Counts, as ourSystem does: its exact count of
// the kept rows reads each of them, which beside a million finished
// items would add a scan of the table to the end of every burn-down.
func (s *retainedSystem) Settled(ctx context.Context) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		var busy bool
		if err := s.db.QueryRowContext(ctx, liveItems, ourQueue).Scan(&busy); err != nil {
			return err
		}
		if !busy {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Stop stops ours and closes the connection.
func (s *retainedSystem) Stop(ctx context.Context) error {
	return errors.Join(s.ourSystem.Stop(ctx), s.db.Close())
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

// MeasureHistory measures cfg once on empty files and once for each of
// sizes (finished items preloaded, Config.History), our store with a
// retention in all of them, and returns a Report per size, the empty
// files' first. The sizes are interleaved: each of cfg.Runs rounds
// measures every size once (a Measure of one run, its templates loaded
// afresh), so that drift of the machine spreads over all of them, and
// each Report holds the medians of its size's rounds.
func MeasureHistory(ctx context.Context, cfg Config, sizes []int) ([]*Report, error) {
	cfg = cfg.withDefaults()
	all := append([]int{0}, sizes...)
	reps := make([]*Report, len(all))
	for r := range cfg.Runs {
		for i, n := range all {
			one := cfg
			one.Runs, one.History, one.Retention = 1, n, true
			rep, err := Measure(ctx, one)
			if err != nil {
				return nil, fmt.Errorf("history %d, round %d: %w", n, r+1, err)
			}
			if reps[i] == nil {
				rep.Config.Runs = cfg.Runs
				reps[i] = rep
				continue
			}
			reps[i].Floor = append(reps[i].Floor, rep.Floor...)
			for c := range reps[i].Columns {
				reps[i].Columns[c].Runs = append(reps[i].Columns[c].Runs, rep.Columns[c].Runs...)
			}
			reps[i].Load[1] = rep.Load[1]
		}
	}
	for _, rep := range reps {
		rep.FloorMedian = median(rep.Floor)
		for c := range rep.Columns {
			rep.Columns[c].Median = medianRun(rep.Columns[c].Runs)
		}
	}
	return reps, nil
}
