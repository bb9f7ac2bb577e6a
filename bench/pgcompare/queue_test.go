package pgcompare

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueuesSmall runs the whole queue comparison at a size CI can afford:
// River, the plain claim store and the store with kinds and retention,
// once, on 500 items, 8 pickups and transactions of 50 items. The other
// settings differ from these only in numbers (workers, fetch intervals).
func TestQueuesSmall(t *testing.T) {
	var progress bytes.Buffer
	cfg := Config{DSN: os.Getenv(dsnEnv), N: 500, Batch: 200, Pickup: 8, PickupWarmup: 1, TxItems: 50, TxRounds: 2, Runs: 1, Timeout: time.Minute, Progress: &progress}
	settings := []Setting{RiverSettings()[1], OurSettings()[0], KindsRetentionSettings()[1]}
	rep, err := Measure(ctx, cfg, settings)
	require.NoError(t, err)
	t.Log("\n" + progress.String())

	require.Len(t, rep.Rows, len(settings))
	for _, row := range rep.Rows {
		require.Len(t, row.Runs, 1, row.Setting)
		m := row.Median
		assert.Positive(t, m.EnqueuePerSec, row.Setting)
		assert.Positive(t, m.BurnDownPerSec, row.Setting)
		assert.Positive(t, m.PickupP50, row.Setting)
		assert.GreaterOrEqual(t, m.PickupP99, m.PickupP50, row.Setting)
		assert.Positive(t, m.PickupAfterP50, row.Setting)
		assert.GreaterOrEqual(t, m.PickupAfterP99, m.PickupAfterP50, row.Setting)
		assert.Positive(t, m.TxEnqueue, row.Setting)
	}
	for _, name := range []string{"fsync", "synchronous_commit", "server_version"} {
		assert.NotEmpty(t, rep.Server[name], name)
	}

	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	for _, s := range settings {
		assert.Contains(t, md.String(), s.Name)
	}
	assert.Contains(t, md.String(), "fsync="+rep.Server["fsync"])
	var svg bytes.Buffer
	require.NoError(t, rep.WriteSVG(&svg))
	assert.True(t, strings.HasPrefix(svg.String(), "<svg"), svg.String())
	assert.Contains(t, svg.String(), "River tuned")

	// The databases of the runs are gone.
	conn, err := pgx.Connect(ctx, cfg.DSN)
	require.NoError(t, err)
	defer func() { require.NoError(t, conn.Close(ctx)) }()
	var left int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname LIKE 'pgcompare_queues_%'").Scan(&left))
	assert.Zero(t, left)
}

func TestPercentileAndMedian(t *testing.T) {
	ds := make([]time.Duration, 200)
	for i := range ds {
		ds[len(ds)-1-i] = time.Duration(i+1) * time.Millisecond
	}
	assert.Equal(t, 100*time.Millisecond, percentile(ds, 50))
	assert.Equal(t, 198*time.Millisecond, percentile(ds, 99))
	assert.Equal(t, 200*time.Millisecond, percentile(ds, 100))
	assert.Equal(t, time.Millisecond, percentile([]time.Duration{time.Millisecond}, 99))
	assert.Zero(t, percentile(nil, 50))
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 2, 3}))
	m := medianRun([]Run{{EnqueuePerSec: 1, PickupP50: 3}, {EnqueuePerSec: 5, PickupP50: 1}, {EnqueuePerSec: 2, PickupP50: 2}})
	assert.Equal(t, Run{EnqueuePerSec: 2, PickupP50: 2}, m)
}

// chanSystem is a System of a buffered channel and goroutines, standing in
// for a library in tests of the harness itself.
type chanSystem struct {
	items chan uint64
	next  uint64 // the last item's ID; Enqueue is called from one goroutine at a time
	// repeat, if not 0, is an item whose ID the worker that takes the
	// item after it reports instead of its own: one item runs twice,
	// another never, and the completions still add up.
	repeat  uint64
	workers int
	stop    chan struct{}
	wg      sync.WaitGroup
}

func (s *chanSystem) Enqueue(_ context.Context, n int) error {
	for range n {
		s.next++
		s.items <- s.next
	}
	return nil
}

func (s *chanSystem) Start(_ context.Context, obs Observer) error {
	for range s.workers {
		s.wg.Go(func() {
			for {
				select {
				case <-s.stop:
					return
				case id := <-s.items:
					if s.repeat != 0 && id == s.repeat+1 {
						id = s.repeat
					}
					obs.Started(id)
					obs.Completed()
				}
			}
		})
	}
	return nil
}

func (s *chanSystem) Settled(context.Context) error { return nil }

func (s *chanSystem) Stop(context.Context) error {
	close(s.stop)
	s.wg.Wait()
	return nil
}

// TestOurSettingsInterleave checks that the claim store's settings run
// through Measure like River's, settings taking turns within each run, with
// a stand-in for the store.
func TestOurSettingsInterleave(t *testing.T) {
	var opened []int
	settings := claimStoreSettings(func(_ context.Context, _ *pgxpool.Pool, workers int) (System, error) {
		opened = append(opened, workers)
		return &chanSystem{items: make(chan uint64, 1000), workers: workers, stop: make(chan struct{})}, nil
	})
	require.Len(t, settings, 2)
	rep, err := Measure(ctx, Config{DSN: os.Getenv(dsnEnv), N: 300, Batch: 100, Pickup: 10, Runs: 3, Timeout: time.Minute}, settings)
	require.NoError(t, err)
	round := []int{100, 100, 100, 2000, 2000, 2000}
	assert.Equal(t, slices.Concat(round, round, round), opened, "a burn-down, a pickup and a transaction database per run, settings interleaved")
	for _, row := range rep.Rows {
		assert.Len(t, row.Runs, 3)
		assert.Positive(t, row.Median.BurnDownPerSec)
		assert.Positive(t, row.Median.PickupP99)
		assert.Positive(t, row.Median.PickupAfterP99, "pickups after the burn-down, with the workers it started")
		assert.Zero(t, row.Median.TxEnqueue, "not a TxEnqueuer")
	}
}

// TestMeasureReportsAnOpenError checks that a setting that cannot open
// fails the measurement, naming the setting, and leaves no database.
func TestMeasureReportsAnOpenError(t *testing.T) {
	bad := Setting{Name: "broken", PoolSize: 1, Open: func(context.Context, *pgxpool.Pool) (System, error) {
		return nil, errors.New("no such library")
	}}
	_, err := Measure(ctx, Config{DSN: os.Getenv(dsnEnv), N: 10, Runs: 1}, []Setting{bad})
	require.ErrorContains(t, err, "broken, run 1: open: no such library")
}

// TestCleanerSmall runs the cleaner measurement at a size CI can afford:
// the cleaner removes every row it was given while claims run, and both
// phases have claims. Its batches are small and paced, as in
// TestCleanerSteadySmall, so that the phase outlasts a stall of a busy
// machine.
func TestCleanerSmall(t *testing.T) {
	var progress bytes.Buffer
	cfg := CleanConfig{DSN: os.Getenv(dsnEnv), Rows: 3000, Batch: 100, Pause: 20 * time.Millisecond, Claimers: 2, Before: 200 * time.Millisecond, Runs: 1, Timeout: time.Minute, Progress: &progress}
	rep, err := MeasureCleaner(ctx, cfg)
	require.NoError(t, err)
	t.Log("\n" + progress.String())
	require.Len(t, rep.Runs, 1)
	m := rep.Median
	assert.Positive(t, m.Clean)
	assert.Positive(t, m.Before.Count)
	assert.Positive(t, m.During.Count)
	assert.GreaterOrEqual(t, m.During.Max, m.During.P99)
	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "while it cleans")
}

// TestBurnDownCatchesARunTwice checks that a burn-down fails when a System
// runs an item twice, even though the completions add up.
func TestBurnDownCatchesARunTwice(t *testing.T) {
	twice := Setting{Name: "twice", PoolSize: 1, Open: func(context.Context, *pgxpool.Pool) (System, error) {
		return &chanSystem{items: make(chan uint64, 1000), workers: 2, stop: make(chan struct{}), repeat: 7}, nil
	}}
	_, err := Measure(ctx, Config{DSN: os.Getenv(dsnEnv), N: 20, Batch: 10, Pickup: 1, Runs: 1, Timeout: time.Minute}, []Setting{twice})
	require.ErrorContains(t, err, "burn-down: 19 distinct items ran, want 20; 1 of them more than once")
}

// TestHistorySmall measures the history settings on empty tables and on
// tables with a few hundred finished rows, and checks that the rows are
// there for each store, that the claim store's Queues and Counts were
// timed, that the growth table has a column per size, and that River's
// setting measured the pickups of its own.
func TestHistorySmall(t *testing.T) {
	var progress bytes.Buffer
	cfg := Config{DSN: os.Getenv(dsnEnv), N: 200, Batch: 100, Pickup: 5, TxRounds: 1, TxItems: 10, Runs: 1, Timeout: time.Minute, History: []int{0, 300}, Progress: &progress}
	settings := HistorySettings()
	require.True(t, strings.HasPrefix(settings[0].Name, "River"), settings[0].Name)
	settings[0].Pickup = 3
	rep, err := Measure(ctx, cfg, settings)
	require.NoError(t, err)
	t.Log("\n" + progress.String())
	require.Len(t, rep.Rows, 2*len(HistorySettings()))
	for i, row := range rep.Rows {
		assert.Equal(t, cfg.History[i%2], row.History, row.Setting)
		if i < 2 {
			assert.Equal(t, 3, row.Pickup, row.Setting)
		} else {
			assert.Equal(t, 5, row.Pickup, row.Setting)
		}
		if row.History > 0 {
			assert.Positive(t, row.Median.Fill, row.Setting)
		}
		if strings.HasPrefix(row.Setting, "lease") {
			assert.Positive(t, row.Median.Counts, row.Setting)
			assert.Positive(t, row.Median.Queues, row.Setting)
		}
	}
	var md bytes.Buffer
	require.NoError(t, rep.WriteHistoryMarkdown(&md))
	assert.Contains(t, md.String(), "| figure | 0 rows | 300 rows | largest / smallest |")
	assert.Contains(t, md.String(), "pickup of 5 ("+settings[0].Name+": 3) items one at a time")

	// The rows each store keeps: loaded into a template of each, and
	// there in a copy of it.
	admin, err := pgx.Connect(ctx, cfg.DSN)
	require.NoError(t, err)
	defer func() { require.NoError(t, admin.Close(ctx)) }()
	for _, s := range HistorySettings() {
		tpl, err := makeTemplate(ctx, cfg.withDefaults(), admin, s, 300)
		require.NoError(t, err, s.Name)
		assert.Positive(t, tpl.fill, s.Name)
		assert.Positive(t, tpl.bytes, s.Name)
		err = withSystem(ctx, cfg.withDefaults(), admin, s, tpl, func(sys System, pool *pgxpool.Pool) error {
			var n int
			if cs, ok := sys.(*claimSystem); ok {
				c, err := cs.store.Counts(ctx, ourQueue)
				assert.Equal(t, 300, c.Completed, "the store counts the rows as completed items it keeps")
				return err
			}
			if err := pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE state = 'completed' AND queue = 'default'").Scan(&n); err != nil {
				return err
			}
			assert.Equal(t, 300, n)
			return nil
		})
		require.NoError(t, err, s.Name)
		_, err = admin.Exec(ctx, "DROP DATABASE "+tpl.db)
		require.NoError(t, err, s.Name)
	}
}

// TestCleanerSteadySmall runs the cleaner under a steady load at a size CI
// can afford: the load completes items in both phases, and its claims are
// timed in both. The cleaner takes small batches with a pause between
// them, so that its phase lasts long enough (30 calls, over 600ms) for the
// load to make claims in it on a busy machine: unpaused, 3,000 rows went
// in 35ms, between two claims of a load slowed to 140 items/s.
func TestCleanerSteadySmall(t *testing.T) {
	var progress bytes.Buffer
	cfg := CleanConfig{DSN: os.Getenv(dsnEnv), Rows: 3000, Batch: 100, Pause: 20 * time.Millisecond, Rate: 500, RateWorkers: 10, Before: 300 * time.Millisecond, Runs: 1, Timeout: time.Minute, Progress: &progress}
	rep, err := MeasureCleaner(ctx, cfg)
	require.NoError(t, err)
	t.Log("\n" + progress.String())
	m := rep.Median
	assert.Positive(t, m.RateBefore)
	assert.Positive(t, m.Before.Count)
	assert.Positive(t, m.During.Count)
	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "a steady 500 items/s")
}

// TestSettledReadsTheClaimIndexes checks that the question Settled asks
// after every pickup finds waiting and claimed items through their partial
// indexes beside a history, rather than scanning the table's kept rows.
func TestSettledReadsTheClaimIndexes(t *testing.T) {
	cfg := Config{DSN: os.Getenv(dsnEnv)}.withDefaults()
	admin, err := pgx.Connect(ctx, cfg.DSN)
	require.NoError(t, err)
	defer func() { require.NoError(t, admin.Close(ctx)) }()
	s := KindsRetentionSettings()[0]
	tpl, err := makeTemplate(ctx, cfg, admin, s, 20_000)
	require.NoError(t, err)
	defer func() { _, err := admin.Exec(ctx, "DROP DATABASE "+tpl.db); require.NoError(t, err) }()
	err = withSystem(ctx, cfg, admin, s, tpl, func(sys System, pool *pgxpool.Pool) error {
		cs := sys.(*claimSystem)
		require.NoError(t, sys.Enqueue(ctx, 1))
		rows, err := pool.Query(ctx, "EXPLAIN "+settledQuery(cs.store.Table()), ourQueue)
		require.NoError(t, err)
		plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		assert.NotContains(t, strings.Join(plan, "\n"), "Seq Scan", strings.Join(plan, "\n"))
		return nil
	})
	require.NoError(t, err)
}
