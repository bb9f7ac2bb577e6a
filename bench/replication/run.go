package replication

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/bench"
)

// Config chooses what Run measures and how. It is a plain value: Run reads
// it and keeps nothing of it but Progress, which it writes to from one
// goroutine.
type Config struct {
	// Targets are the clusters to measure: "etcd", "ours", or both.
	Targets []string
	// Scenarios are the scenarios to run, by name (see ScenarioNames);
	// empty runs them all.
	Scenarios []string
	// Runs is how many times each scenario runs on each target, each
	// time on a fresh cluster; Run reports the median.
	Runs int
	// Duration is how long each throughput run lasts.
	Duration time.Duration
	// Clients is how many goroutines send requests at once.
	Clients int
	// ExpiryLeases is how many leases expire in the expiry-lag scenario.
	ExpiryLeases int
	// DueLeases is how many leases fall due together in due-together,
	// and DueTTL their TTL: granting them must take less than two thirds
	// of it, so that renewing them all ends before the first expires.
	DueLeases int
	DueTTL    time.Duration
	// Dir is where each cluster's temporary data directory is made; empty
	// means the system's temporary directory.
	Dir string
	// Progress, when not nil, gets a line as each run starts and ends.
	Progress io.Writer
}

// Full is the configuration of the manual run: both targets, every
// scenario, 3 runs of 5 s, 64 clients, 1,000 leases expiring and 5,000 due
// together with a TTL of 15 s.
func Full() Config {
	return Config{
		Targets:      []string{"etcd", "ours"},
		Runs:         3,
		Duration:     5 * time.Second,
		Clients:      64,
		ExpiryLeases: 1000,
		DueLeases:    5000,
		DueTTL:       15 * time.Second,
	}
}

// ScenarioNames lists the scenarios in the order they run.
func ScenarioNames() []string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.key
	}
	return names
}

// targets starts each target's cluster.
var targets = map[string]starter{
	"etcd": startEtcd,
	"ours": startOurs,
}

// TargetNames lists the targets Config.Targets may name.
func TargetNames() []string { return []string{"etcd", "ours"} }

// Result is the median of one figure over the runs of one scenario on one
// target. It is a plain value, shared by nothing once Run returns.
type Result struct {
	Target   string    `json:"target"`
	Scenario string    `json:"scenario"`
	Metric   string    `json:"metric"`
	Median   float64   `json:"median"`
	Runs     []float64 `json:"runs"`
	// Reference is etcd's figure measured earlier on this machine, or the
	// goal for ours; empty when there is none.
	Reference string `json:"reference,omitempty"`
}

// Report is the outcome of Run. Its Write methods only read it, so they may
// run concurrently with one another, but not with changes to it.
type Report struct {
	Date      time.Time `json:"date"`
	GoVersion string    `json:"go_version"`
	CPU       string    `json:"cpu"`
	Cores     int       `json:"cores"`
	LoadStart string    `json:"load_start"` // 1, 5 and 15 minute load averages
	LoadEnd   string    `json:"load_end"`
	Settings  string    `json:"settings"`
	Results   []Result  `json:"results"`
}

// Run measures every scenario cfg names on every target it names, running
// the targets in turn for each run so that both see the same machine load.
// Every run starts a fresh cluster in a temporary directory, removed after.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	chosen, err := cfg.check()
	if err != nil {
		return nil, err
	}
	m := bench.ThisMachine()
	rep := &Report{Date: m.Date, GoVersion: m.GoVersion, CPU: m.CPU, Cores: m.Cores, LoadStart: m.LoadStart, Settings: cfg.settings()}
	index := map[[3]string]int{}
	for _, sc := range chosen {
		for run := range cfg.Runs {
			for _, target := range cfg.Targets {
				cfg.progress("%s %s run %d/%d ...", target, sc.key, run+1, cfg.Runs)
				ms, err := runOnce(ctx, targets[target], sc, cfg)
				if err != nil {
					return nil, fmt.Errorf("%s, %s, run %d: %w", target, sc.key, run+1, err)
				}
				var line []string
				for _, m := range ms {
					k := [3]string{target, m.scenario, m.metric}
					i, ok := index[k]
					if !ok {
						i = len(rep.Results)
						index[k] = i
						rep.Results = append(rep.Results, Result{Target: target, Scenario: m.scenario, Metric: m.metric, Reference: references[k]})
					}
					rep.Results[i].Runs = append(rep.Results[i].Runs, m.value)
					line = append(line, fmt.Sprintf("%s %s %s", m.scenario, format(m.value), m.metric))
				}
				cfg.progress("  %s", strings.Join(line, ", "))
			}
		}
	}
	for i := range rep.Results {
		rep.Results[i].Median = median(rep.Results[i].Runs)
	}
	rep.LoadEnd = bench.LoadAverage()
	return rep, nil
}

// runOnce runs sc once on a fresh cluster of start.
func runOnce(ctx context.Context, start starter, sc scenario, cfg Config) (ms []measure, err error) {
	dir, err := os.MkdirTemp(cfg.Dir, "lease-replication-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := os.RemoveAll(dir); err == nil {
			err = rerr
		}
	}()
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	sys, err := start(sctx, dir)
	cancel()
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := sys.close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing: %w", cerr)
		}
	}()
	cfg.Dir = dir // where the scenario may measure the disk
	return sc.run(ctx, sys, cfg)
}

// check validates cfg and returns the scenarios it names.
func (cfg Config) check() ([]scenario, error) {
	switch {
	case len(cfg.Targets) == 0:
		return nil, invalid("Targets", "no target")
	case cfg.Runs < 1:
		return nil, invalid("Runs", "must be at least 1")
	case cfg.Duration <= 0:
		return nil, invalid("Duration", "must be positive")
	case cfg.Clients < 1:
		return nil, invalid("Clients", "must be at least 1")
	case cfg.ExpiryLeases < 1:
		return nil, invalid("ExpiryLeases", "must be at least 1")
	case cfg.DueLeases < 1:
		return nil, invalid("DueLeases", "must be at least 1")
	case cfg.DueTTL < 2*time.Second:
		return nil, invalid("DueTTL", "must be at least 2s, etcd's shortest TTL at its defaults")
	}
	for _, t := range cfg.Targets {
		if _, ok := targets[t]; !ok {
			return nil, invalid("Targets", fmt.Sprintf("unknown target %q (have %s)", t, strings.Join(TargetNames(), ", ")))
		}
	}
	if len(cfg.Scenarios) == 0 {
		return scenarios, nil
	}
	var chosen []scenario
	for _, name := range cfg.Scenarios {
		i := slices.IndexFunc(scenarios, func(s scenario) bool { return s.key == name })
		if i < 0 {
			return nil, invalid("Scenarios", fmt.Sprintf("unknown scenario %q (have %s)", name, strings.Join(ScenarioNames(), ", ")))
		}
		chosen = append(chosen, scenarios[i])
	}
	return chosen, nil
}

// invalid is the error for a bad field of Config.
func invalid(field, why string) error {
	return &lease.Error{Code: lease.CodeInvalidArgument, Op: "run", Field: field, Detail: why}
}

func (cfg Config) settings() string {
	return fmt.Sprintf("%d runs a scenario, median reported; %v a throughput run; %d clients; %d leases expiring; %d due together (TTL %v); 3-node clusters on 127.0.0.1, data on disk, fsync on",
		cfg.Runs, cfg.Duration, cfg.Clients, cfg.ExpiryLeases, cfg.DueLeases, cfg.DueTTL)
}

func (cfg Config) progress(f string, args ...any) {
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, f+"\n", args...)
	}
}

// median returns the median of v, the mean of the middle two for an even
// count.
func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// references are etcd's figures measured earlier on this machine and the
// goals for ours, by target, scenario and metric.
var references = map[[3]string]string{
	{"etcd", "grant+revoke", "pairs/s"}:               "earlier: ~1,000",
	{"ours", "grant+revoke", "pairs/s"}:               "goal: >= 3x etcd",
	{"ours", "grant then put (two calls)", "pairs/s"}: "goal: >= 3x etcd",
	{"etcd", "renew (KeepAliveOnce)", "renewals/s"}:   "earlier: ~30,000",
	{"etcd", "renew (kept stream)", "renewals/s"}:     "earlier: ~150,000",
	{"ours", "renew (Renew)", "renewals/s"}:           "goal: >= 1.5x etcd KeepAliveOnce",
	{"etcd", "expiry lag", "p99 ms"}:                  "earlier: ~505",
	{"ours", "expiry lag", "p99 ms"}:                  "goal: < 10",
	{"etcd", "due together", "drain ms"}:              "earlier: ~6,000",
	{"ours", "due together", "drain ms"}:              "goal: <= 100",
}
