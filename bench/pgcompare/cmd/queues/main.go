// Command queues measures work queues on PostgreSQL side by side: River
// (github.com/riverqueue/river) in three settings and this repository's
// claim store (postgres.ClaimStore worked by claim.Broker) in two. Each run
// uses fresh databases that it creates on the server and drops again.
//
// With -features it measures instead the settings of
// pgcompare.FeatureSettings: River tuned and bench beside the claim store
// plain and with job kinds and retention on. With -clean N it then also
// measures the retention cleaner removing N completed rows while claims
// run (pgcompare.MeasureCleaner); -n 0 skips the queue comparison. With
// -split it adds the claim store at 100 workers with kinds alone and with
// retention alone (pgcompare.SplitSettings). With the environment variable
// With -history N1,N2,... it measures instead pgcompare.HistorySettings
// (River tuned beside the claim store with retention, both at 100
// workers) on tables that first get N finished rows each (bulk-loaded,
// then VACUUM ANALYZE), and on empty ones, and prints beside the table of
// medians one table per setting of how each figure grows with the
// history, with the claim store's Queues and Counts timed on it. With
// PGCOMPARE_TRACE set, each claim store system writes the medians of its
// pickups' steps to standard error as it stops (pgcompare.TraceEnv).
// With PGCOMPARE_CPU set, each burn-down writes to standard error the CPU
// it cost per 10,000 items, this process's and the server's, and the
// share of the machine other work took meanwhile, and the time of two fixed
// pieces of work (a hash, a walk of memory) before and after it, which
// moves with the machine's speed rather than the code's; set to a directory, it
// also writes CPU and allocation profiles there (pgcompare.CPUEnv).
//
// It prints a markdown table of the medians over the runs to standard
// output, progress to standard error, and with -svg writes a bar chart.
// From bench/pgcompare, against a throwaway server:
//
//	../../scripts/with-postgres go run ./cmd/queues -n 100000 -runs 5 -svg /tmp/queues.svg
//	../../scripts/with-postgres go run ./cmd/queues -features -clean 1000000
//	../../scripts/with-postgres go run ./cmd/queues -n 100000 -history 10000,100000,1000000 -runs 3
//	../../scripts/with-postgres go run ./cmd/queues -n 0 -clean 1000000 -clean-rate 5000
//
// Every burn-down checks that each item it enqueued ran exactly once.
//
// Flags:
//
//	-dsn          the server (default $LEASE_POSTGRES_DSN); the role needs CREATEDB
//	-n            items enqueued and burnt down in each run (100000); 0 skips the queue comparison
//	-batch        items per bulk enqueue call (5000)
//	-pickup       items whose pickup latency each run measures (200), after -warmup (5)
//	-river-pickup the same for River's settings, if not -pickup: River reports a completion
//	              a few hundred ms after its handler returned, and the harness waits for it
//	-runs         runs of each setting, interleaved round by round; tables show medians (3)
//	-timeout      limit on each phase of a run (10m)
//	-only         measure only the settings whose names contain this text (alternatives separated by |)
//	-tx-items     items enqueued in one caller transaction (1000), -tx-rounds of them (5)
//	-features     River tuned and bench beside the claim store plain and with kinds and retention
//	-split        add the claim store with kinds alone and with retention alone
//	-history      comma-separated finished-row counts to preload; an empty table is always measured too
//	-clean        also measure the retention cleaner removing this many rows while claims run
//	-clean-pause  the cleaner's pause between Clean calls (0: as long as the previous call took)
//	-clean-before how long the load runs alone first, the baseline (3s)
//	-clean-rate   with -clean, a steady load of this many items/s (Broker.Work, -clean-workers handlers)
//	              instead of claim loops: claim p99 and completions/s before and while the cleaner runs
//	-svg          also write a bar chart of the medians to this file
//
// The server is LEASE_POSTGRES_DSN unless -dsn names one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold/lease/bench/pgcompare"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "queues:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		cfg  pgcompare.Config
		only string
		svg  string

		features bool
		split    bool
		history  string
		clean    pgcompare.CleanConfig

		riverPickup int
	)
	flag.StringVar(&cfg.DSN, "dsn", os.Getenv("LEASE_POSTGRES_DSN"), "the PostgreSQL server (default $LEASE_POSTGRES_DSN); the role needs CREATEDB")
	flag.IntVar(&cfg.N, "n", 100_000, "items enqueued and burnt down in each run")
	flag.IntVar(&cfg.Batch, "batch", 5_000, "items per bulk enqueue call")
	flag.IntVar(&cfg.Pickup, "pickup", 200, "items whose pickup latency each run measures")
	flag.IntVar(&cfg.PickupWarmup, "warmup", 5, "unmeasured pickups before those")
	flag.IntVar(&riverPickup, "river-pickup", 0, "pickups each run of River measures, if not -pickup (River's take a few hundred ms each to report their completion)")
	flag.IntVar(&cfg.Runs, "runs", 3, "runs of each setting; the table shows medians")
	flag.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "limit on each phase of a run")
	flag.StringVar(&only, "only", "", "measure only the settings whose names contain this text; alternatives separated by |, e.g. River|kinds")
	flag.IntVar(&cfg.TxItems, "tx-items", 1_000, "items enqueued in one caller transaction")
	flag.IntVar(&cfg.TxRounds, "tx-rounds", 5, "caller transactions timed in each run")
	flag.BoolVar(&features, "features", false, "measure River tuned and bench beside the claim store plain and with kinds and retention")
	flag.StringVar(&history, "history", "", "comma-separated counts of finished rows to preload into each table, e.g. 10000,100000,1000000 (an empty table is measured too)")
	flag.BoolVar(&split, "split", false, "also measure the claim store at 100 workers with kinds alone and with retention alone")
	flag.DurationVar(&clean.Pause, "clean-pause", 0, "the cleaner's pause between Clean calls: 0 as long as the previous call took, negative none")
	flag.IntVar(&clean.Rows, "clean", 0, "also measure the retention cleaner removing this many completed rows while claims run")
	flag.IntVar(&clean.Rate, "clean-rate", 0, "with -clean, a steady load of this many items/s worked off by Broker.Work instead of one-at-a-time claim loops")
	flag.IntVar(&clean.RateWorkers, "clean-workers", 100, "handlers of the -clean-rate load")
	flag.DurationVar(&clean.Before, "clean-before", 3*time.Second, "how long the load runs before the cleaner starts: the baseline of the claim latencies")
	flag.StringVar(&svg, "svg", "", "also write a bar chart of the medians to this file (it must not exist)")
	flag.Parse()
	if flag.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if cfg.DSN == "" {
		return errors.New("no server: set LEASE_POSTGRES_DSN or -dsn (scripts/with-postgres sets it)")
	}
	all := append(pgcompare.RiverSettings(), pgcompare.OurSettings()...)
	if features {
		all = pgcompare.FeatureSettings()
	}
	if split {
		all = append(all, pgcompare.SplitSettings()...)
	}
	if history != "" {
		cfg.History = []int{0}
		for _, f := range strings.Split(history, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 {
				return fmt.Errorf("-history %q: want counts separated by commas", history)
			}
			if n > 0 {
				cfg.History = append(cfg.History, n)
			}
		}
		if !features && !split {
			all = pgcompare.HistorySettings()
		}
	}
	var settings []pgcompare.Setting
	for _, s := range all {
		if riverPickup > 0 && strings.HasPrefix(s.Name, "River") {
			s.Pickup = riverPickup
		}
		if slices.ContainsFunc(strings.Split(only, "|"), func(o string) bool { return strings.Contains(s.Name, o) }) {
			settings = append(settings, s)
		}
	}
	if len(settings) == 0 {
		return fmt.Errorf("no setting matches -only %q", only)
	}
	var out *os.File
	if svg != "" {
		// Created up front, and never over an existing file, so that a run
		// neither ends without its chart nor overwrites one.
		f, err := os.OpenFile(svg, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		out = f
	}
	cfg.Progress = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if cfg.N > 0 {
		rep, err := pgcompare.Measure(ctx, cfg, settings)
		if err != nil {
			if out != nil {
				_ = out.Close()
				_ = os.Remove(svg)
			}
			return err
		}
		if err := rep.WriteMarkdown(os.Stdout); err != nil {
			return err
		}
		if len(cfg.History) > 1 {
			fmt.Println()
			if err := rep.WriteHistoryMarkdown(os.Stdout); err != nil {
				return err
			}
		}
		if out != nil {
			if err := errors.Join(rep.WriteSVG(out), out.Close()); err != nil {
				return err
			}
			fmt.Fprintln(os.Stderr, "wrote", svg)
		}
	}
	if clean.Rows > 0 {
		clean.DSN, clean.Runs, clean.Timeout, clean.Progress = cfg.DSN, cfg.Runs, cfg.Timeout, os.Stderr
		crep, err := pgcompare.MeasureCleaner(ctx, clean)
		if err != nil {
			return err
		}
		fmt.Println()
		return crep.WriteMarkdown(os.Stdout)
	}
	return nil
}
