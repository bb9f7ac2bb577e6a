// Command replication measures the replicated lease service
// (github.com/leasehold/lease/replicated) beside etcd, each as a 3-node
// cluster started in this process on 127.0.0.1 with its data on disk and
// fsync on, clients on the leader. It runs each scenario 3 times on a fresh
// cluster and prints the medians:
//
//   - grant-revoke: 64 clients each granting a lease (TTL 60 s) and revoking it;
//   - grant-put: granting a lease, then putting one key to it: two calls on both;
//   - grant-with-key: granting a lease with one key in the fewest calls
//     (ours: GrantWithKey, one call; etcd, which has no such call: Grant, then Put);
//   - renew: renewals of one lease per client (etcd: KeepAliveOnce, and
//     requests on a kept LeaseKeepAlive stream; ours: Renew);
//   - expiry-lag: 1,000 leases of TTL 1 to 3 s expiring while 64 clients
//     renew other leases; the lag is when the end was observed (etcd: the
//     watch event deleting the lease's key; ours: OnEnd on the leader)
//     minus the deadline (etcd: grant response time plus TTL; ours:
//     ExpiresAt), p50 and p99, beside the p50 and p99 of a probe syncing a
//     file on the same disk meanwhile (the floor the disk sets for a commit);
//   - due-together: 5,000 leases falling due together (ours: each granted
//     with the TTL that ends it at the common instant; etcd, whose TTLs are
//     whole seconds: all renewed at once), and the time from the last
//     deadline until the last ended.
//
// Usage, from the bench directory:
//
//	go run ./cmd/replication                          # both targets, every scenario, about 6 minutes
//	go run ./cmd/replication -target etcd -out r.md   # etcd only, and write the report as Markdown
//	go run ./cmd/replication -scenarios renew -duration 2s
//
// Flags:
//
//	-target etcd|ours|both   the clusters to measure (default both)
//	-scenarios LIST          comma-separated: grant-revoke,grant-put,grant-with-key,renew,expiry-lag,due-together (default all)
//	-duration D              length of each throughput run (default 5s)
//	-clients N               concurrent clients (default 64)
//	-runs N                  runs per scenario and target; the median is reported (default 3)
//	-expiry-leases N         leases in expiry-lag (default 1000)
//	-due-leases N            leases in due-together (default 5000)
//	-out FILE                also write the report to FILE: JSON if it ends in .json, else Markdown
//	-cpuprofile FILE         write a CPU profile of the whole run to FILE (go tool pprof reads it)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"

	"github.com/leasehold/lease/bench/replication"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "replication:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := replication.Full()
	fs := flag.NewFlagSet("replication", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("target", "both", "the clusters to measure: etcd, ours or both")
	list := fs.String("scenarios", "", "comma-separated scenarios: "+strings.Join(replication.ScenarioNames(), ",")+" (default all)")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of each throughput run")
	fs.IntVar(&cfg.Clients, "clients", cfg.Clients, "concurrent clients")
	fs.IntVar(&cfg.Runs, "runs", cfg.Runs, "runs per scenario and target; the median is reported")
	fs.IntVar(&cfg.ExpiryLeases, "expiry-leases", cfg.ExpiryLeases, "leases in expiry-lag")
	fs.IntVar(&cfg.DueLeases, "due-leases", cfg.DueLeases, "leases in due-together")
	out := fs.String("out", "", "also write the report to this file: JSON if it ends in .json, else Markdown")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch *target {
	case "both":
	case "etcd", "ours":
		cfg.Targets = []string{*target}
	default:
		return fmt.Errorf("-target %q: want etcd, ours or both", *target)
	}
	if *list != "" {
		cfg.Scenarios = strings.Split(*list, ",")
	}
	cfg.Progress = stderr
	if *cpuProfile != "" {
		pf, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			return errors.Join(err, pf.Close())
		}
		defer func() {
			pprof.StopCPUProfile()
			_ = pf.Close()
		}()
	}
	command := strings.TrimSpace("go run ./cmd/replication " + strings.Join(args, " "))
	rep, err := replication.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if err := rep.WriteText(stdout); err != nil {
		return err
	}
	if *out == "" {
		return nil
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if strings.HasSuffix(*out, ".json") {
		err = rep.WriteJSON(f)
	} else {
		err = rep.WriteMarkdown(f, command)
	}
	return errors.Join(err, f.Close())
}
