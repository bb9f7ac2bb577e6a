// Command haqueues measures the replicated work queue
// (replicated.NewClaimStore on a three-node raft cluster in this process)
// beside River on PostgreSQL, and the cluster's heap, snapshots and
// failover; see package hacompare for what it does and its flags:
//
//	../../scripts/with-postgres go run ./cmd/haqueues -n 20000 -runs 5
//	go run ./cmd/haqueues -n 0 -retained 1000000 -kill 100000
//
// It prints markdown tables to standard output and progress to standard
// error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"time"

	"github.com/riverqueue/river"

	"github.com/leasehold/lease/bench/hacompare"
	"github.com/leasehold/lease/bench/pgcompare"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "haqueues:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		cfg      pgcompare.Config
		sys      hacompare.SystemConfig
		retained int
		kill     int
		lease    time.Duration
		all      bool
		cpuprof  string
	)
	flag.StringVar(&cfg.DSN, "dsn", os.Getenv("LEASE_POSTGRES_DSN"), "the PostgreSQL server for River (default $LEASE_POSTGRES_DSN); the role needs CREATEDB")
	flag.IntVar(&cfg.N, "n", 20_000, "items enqueued and burnt down in each run; 0 skips the comparison")
	flag.IntVar(&cfg.Batch, "batch", 1_000, "items per bulk enqueue call")
	flag.IntVar(&cfg.Pickup, "pickup", 200, "items whose pickup latency each run measures")
	flag.IntVar(&cfg.PickupWarmup, "warmup", 5, "unmeasured pickups before those")
	flag.IntVar(&cfg.Runs, "runs", 3, "rounds, each running every system once; the table shows medians")
	flag.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "limit on each phase of a run")
	flag.IntVar(&sys.Workers, "workers", 100, "handlers of each system")
	flag.BoolVar(&sys.Spread, "spread", false, "spread the replicated queue's workers over the three nodes instead of running them all on the leader")
	flag.BoolVar(&sys.Cluster.TLS, "tls", true, "mutual TLS between the nodes; false runs them on plain TCP")
	flag.BoolVar(&sys.Retention, "retention", false, "keep completed items for claim.StandardRetention instead of deleting them")
	flag.BoolVar(&all, "all", false, "measure the replicated queue in all eight combinations of -spread, -tls and -retention, beside River")
	flag.IntVar(&retained, "retained", 0, "also keep this many completed items on a cluster and measure its heap, a snapshot and a restore")
	flag.IntVar(&kill, "kill", 0, "also burn down this many items with the workers spread and kill the leader half way")
	flag.DurationVar(&lease, "lease", 5*time.Second, "the claims' lease in the -kill measurement")
	flag.StringVar(&cpuprof, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if flag.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if cpuprof != "" {
		f, err := os.Create(cpuprof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if cfg.N > 0 {
		if cfg.DSN == "" {
			return errors.New("no server for River: set LEASE_POSTGRES_DSN or -dsn (scripts/with-postgres sets it), or -n 0")
		}
		cfg.Progress = os.Stderr
		cfg.TxRounds = 1 // the replicated queue has no caller transactions; River's is timed once
		settings := []pgcompare.Setting{
			pgcompare.RiverSetting(fmt.Sprintf("River tuned (%d workers)", sys.Workers),
				river.Config{FetchCooldown: 2 * time.Millisecond, FetchPollInterval: 20 * time.Millisecond}, sys.Workers),
		}
		if all {
			for _, spread := range []bool{false, true} {
				for _, tls := range []bool{true, false} {
					for _, ret := range []bool{false, true} {
						c := sys
						c.Spread, c.Cluster.TLS, c.Retention = spread, tls, ret
						settings = append(settings, hacompare.Setting(c))
					}
				}
			}
		} else {
			settings = append(settings, hacompare.Setting(sys))
		}
		rep, err := pgcompare.Measure(ctx, cfg, settings)
		if err != nil {
			return err
		}
		fmt.Print("Replicated queue: 3 nodes in one process on 127.0.0.1, each on its own TCP transport, fsync on, raft's default timeouts; its pool column is the PostgreSQL pool it is given and does not use. " +
			"River tuned: FetchCooldown 2 ms, FetchPollInterval 20 ms. Every burn-down checked each item ran exactly once.\n\n")
		if err := rep.WriteMarkdown(os.Stdout); err != nil {
			return err
		}
	}
	if retained > 0 {
		res, err := hacompare.MeasureRetained(ctx, sys, retained, max(cfg.Batch, 1), os.Stderr)
		if err != nil {
			return fmt.Errorf("retained: %w", err)
		}
		fmt.Println()
		if err := res.WriteMarkdown(os.Stdout, withRetention(sys)); err != nil {
			return err
		}
	}
	if kill > 0 {
		ks := sys
		ks.Lease = lease
		res, err := hacompare.MeasureKill(ctx, ks, kill, max(cfg.Batch, 1), os.Stderr)
		if err != nil {
			return fmt.Errorf("kill: %w", err)
		}
		fmt.Println()
		if err := res.WriteMarkdown(os.Stdout, ks); err != nil {
			return err
		}
	}
	return nil
}

func withRetention(c hacompare.SystemConfig) hacompare.SystemConfig {
	c.Retention = true
	return c
}
