// Command sqlitequeues measures work queues on an SQLite file side by side:
// this repository's sqlite.ClaimStore worked by claim.Broker, River
// (github.com/riverqueue/river) on its SQLite driver, and goqite
// (maragu.dev/goqite) with its jobs runner, all through
// modernc.org/sqlite, on files in one temporary directory.
//
// It prints a markdown table of the medians to standard output and
// progress to standard error. From bench/sqlitecompare:
//
//	go run ./cmd/sqlitequeues -sync FULL -runs 3
//	go run ./cmd/sqlitequeues -memory 1000000   # the heap while 1M items pass through ours
//	go run ./cmd/sqlitequeues -history 10000,100000,1000000 -runs 3
//
// With -history N1,N2,... it measures everything on empty files and on
// files that first hold N finished items where the queue keeps them (our
// store then with claim.StandardRetention; River's completed jobs; goqite
// keeps none), the sizes interleaved round by round
// (sqlitecompare.MeasureHistory), prints each size's table and then one
// table per queue of how each figure grows with the history.
// Every burn-down checks that each item it enqueued ran exactly once.
//
// Flags:
//
//	-dir          where to make the temporary files (the system's temporary directory)
//	-sync         PRAGMA synchronous of every queue: FULL or NORMAL (FULL)
//	-floor        how long to measure the commit floor each run (2s)
//	-burndown     items worked off in each burn-down (10000)
//	-workers      worker counts of the burn-downs (1,10,100)
//	-enqueue      items enqueued in batches (100000), -batch per call (1000)
//	-enqueue-one  items enqueued one per call by -goroutines goroutines (10000, 100)
//	-pickup       items whose pickup latency each run measures (100)
//	-runs         runs of each queue, interleaved round by round; tables show medians (3)
//	-timeout      limit on each phase of a run (10m)
//	-only         measure only the queues whose names contain this text
//	-history      comma-separated counts of finished items to preload; empty files are measured too
//	-memory       instead, pass this many items through ours and print the heap
//	-cpuprofile   write a CPU profile of the whole measurement to this file
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold/lease/bench/sqlitecompare"
)

func main() {
	sqlitecompare.ServeChild() // the other process of the cross-process pickup
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sqlitequeues:", err)
		os.Exit(1)
	}
}

func run() (err error) {
	var (
		cfg     sqlitecompare.Config
		sync    string
		workers string
		only    string
		memory  int
		history string
		cpuprof string
	)
	flag.StringVar(&cfg.Dir, "dir", "", "where to make the temporary files (default the system's temporary directory)")
	flag.StringVar(&sync, "sync", "FULL", "PRAGMA synchronous of every queue: FULL or NORMAL")
	flag.DurationVar(&cfg.Floor, "floor", 2*time.Second, "how long to measure the commit floor each run")
	flag.IntVar(&cfg.BurnDown, "burndown", 10_000, "items worked off in each burn-down")
	flag.StringVar(&workers, "workers", "1,10,100", "worker counts of the burn-downs")
	flag.IntVar(&cfg.Enqueue, "enqueue", 100_000, "items enqueued in batches")
	flag.IntVar(&cfg.Batch, "batch", 1_000, "items per batched enqueue call")
	flag.IntVar(&cfg.EnqueueOne, "enqueue-one", 10_000, "items enqueued one per call by -goroutines goroutines (a tenth of them by one goroutine)")
	flag.IntVar(&cfg.Goroutines, "goroutines", 100, "goroutines enqueueing one item per call")
	flag.IntVar(&cfg.Pickup, "pickup", 100, "items whose pickup latency each run measures")
	flag.IntVar(&cfg.Runs, "runs", 3, "runs of each queue; the table shows medians")
	flag.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "limit on each phase of a run")
	flag.StringVar(&only, "only", "", "measure only the queues whose names contain this text")
	flag.StringVar(&history, "history", "", "comma-separated counts of finished items to preload into every file, e.g. 10000,100000,1000000 (empty files are measured too)")
	flag.IntVar(&memory, "memory", 0, "instead, pass this many items through ours and print the heap ten times on the way")
	flag.StringVar(&cpuprof, "cpuprofile", "", "write a CPU profile of the whole measurement to this file")
	flag.Parse()
	if flag.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	cfg.Sync = sqlitecompare.Sync(strings.ToUpper(sync))
	if cfg.Sync != sqlitecompare.SyncFull && cfg.Sync != sqlitecompare.SyncNormal {
		return fmt.Errorf("-sync %q: want FULL or NORMAL", sync)
	}
	cfg.Workers = nil
	for _, f := range strings.Split(workers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-workers %q: want positive numbers separated by commas", workers)
		}
		cfg.Workers = append(cfg.Workers, n)
	}
	for _, q := range sqlitecompare.Queues() {
		if strings.Contains(q.Name, only) {
			cfg.Queues = append(cfg.Queues, q.Name)
		}
	}
	if len(cfg.Queues) == 0 {
		return fmt.Errorf("no queue matches -only %q", only)
	}
	cfg.Progress = os.Stderr
	if cpuprof != "" {
		f, err := os.Create(cpuprof)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return errors.Join(err, f.Close())
		}
		defer func() {
			pprof.StopCPUProfile()
			err = errors.Join(err, f.Close())
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if memory > 0 {
		dir, err := os.MkdirTemp(cfg.Dir, "sqlitecompare-memory-")
		if err != nil {
			return err
		}
		defer func() { _ = os.RemoveAll(dir) }()
		samples, err := sqlitecompare.MemorySoak(ctx, dir, cfg.Sync, memory, 100, cfg.Batch, 10*cfg.Batch)
		if err != nil {
			return err
		}
		return sqlitecompare.WriteMemory(os.Stdout, samples)
	}
	sizes := []int{0}
	if history != "" {
		for _, f := range strings.Split(history, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 {
				return fmt.Errorf("-history %q: want counts separated by commas", history)
			}
			if n > 0 {
				sizes = append(sizes, n)
			}
		}
	}
	if len(sizes) == 1 {
		rep, err := sqlitecompare.Measure(ctx, cfg)
		if err != nil {
			return err
		}
		return rep.WriteMarkdown(os.Stdout)
	}
	reps, err := sqlitecompare.MeasureHistory(ctx, cfg, sizes[1:])
	if err != nil {
		return err
	}
	for i, rep := range reps {
		if i > 0 {
			fmt.Println()
		}
		if err := rep.WriteMarkdown(os.Stdout); err != nil {
			return err
		}
	}
	fmt.Println()
	return sqlitecompare.WriteHistoryMarkdown(os.Stdout, reps)
}
