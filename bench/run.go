package bench

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"testing"
	"time"
)

// Cell is one peer's result for one scenario.
type Cell struct {
	Samples []Sample
	Median  Sample
	N       int    // leases the scenario used for this peer, 0 for none
	NA      string // why the peer cannot run the scenario, if it cannot
	Err     error  // why the scenario failed, if it did
}

// Row is one scenario across every peer, cells in peer order.
type Row struct {
	Info  Info
	Cells []Cell
}

// Report is the outcome of Run.
type Report struct {
	Config  Config
	Runs    int
	Peers   []Peer
	Rows    []Row
	Started time.Time
	Took    time.Duration
}

// Run runs every scenario against every peer, runs times each, logging
// progress to log. Peers run one after another so that one peer's leases
// are gone before the next is measured.
func Run(cfg Config, runs int, peers []Peer, log io.Writer) *Report {
	r := &Report{Config: cfg, Runs: runs, Peers: peers, Started: time.Now()}
	infos := Infos()
	cells := make(map[Scenario][]Cell, len(infos))
	for _, in := range infos {
		cells[in.Scenario] = make([]Cell, len(peers))
	}
	for pi, p := range peers {
		pr := peerRun{p: p, cfg: cfg, runs: runs, log: log}
		for s, c := range pr.all() {
			cells[s][pi] = c
		}
	}
	for _, in := range infos {
		r.Rows = append(r.Rows, Row{Info: in, Cells: cells[in.Scenario]})
	}
	r.Took = time.Since(r.Started)
	return r
}

type peerRun struct {
	p    Peer
	cfg  Config
	runs int
	log  io.Writer
	out  map[Scenario]Cell
}

func (pr *peerRun) all() map[Scenario]Cell {
	pr.out = make(map[Scenario]Cell)
	l, err := pr.p.New()
	if err != nil {
		for _, in := range Infos() {
			pr.out[in.Scenario] = Cell{Err: err}
		}
		return pr.out
	}
	pr.bench(GrantRevoke, 0, func(b *testing.B) { BenchGrantRevoke(b, l) })
	if k, ok := l.(KeyedLeaser); ok {
		pr.bench(AttachRevoke, 0, func(b *testing.B) { BenchAttachRevoke(b, k) })
	} else {
		pr.out[AttachRevoke] = Cell{NA: "no keys"}
	}
	if Concurrent(l) {
		pr.bench(ParallelMixed, 0, func(b *testing.B) { BenchParallelMixed(b, l) })
	} else {
		pr.out[ParallelMixed] = Cell{NA: "not safe for concurrent use"}
	}
	pr.bench(SerialMixed, 0, func(b *testing.B) { BenchSerialMixed(b, l) })
	_, keyed := l.(Keyed)
	_, expirer := l.(Expirer)
	_, sweeper := l.(Sweeper)
	if err := l.Close(); err != nil {
		pr.logf("close: %v", err)
	}

	pr.memoryAndRenew()
	pr.repeat(MemoryChurn, pr.cfg.Size(MemoryChurn, pr.p), func(n int) (Sample, error) { return RunMemoryChurn(pr.p, n) })
	if keyed {
		pr.repeat(MemoryKeyed, pr.cfg.Size(MemoryKeyed, pr.p), func(n int) (Sample, error) {
			s, l, _, err := RunMemory(pr.p, n, 2)
			if l != nil {
				l.Close()
			}
			return s, err
		})
	} else {
		pr.out[MemoryKeyed] = Cell{NA: "no keys"}
	}
	if expirer || sweeper {
		pr.repeat(ExpireBurst, pr.cfg.Size(ExpireBurst, pr.p), func(n int) (Sample, error) { return RunExpireBurst(pr.p, n, 0) })
	} else {
		pr.out[ExpireBurst] = Cell{NA: "no expiry"}
	}
	if (expirer || sweeper) && keyed {
		pr.repeat(ExpireBurstKeyed, pr.cfg.Size(ExpireBurstKeyed, pr.p), func(n int) (Sample, error) { return RunExpireBurst(pr.p, n, 1) })
	} else {
		pr.out[ExpireBurstKeyed] = Cell{NA: "no keys"}
	}
	if expirer {
		pr.repeat(ExpiryLag, pr.cfg.Size(ExpiryLag, pr.p), func(n int) (Sample, error) {
			return RunExpiryLag(pr.p, n, pr.cfg.LagTTL, pr.cfg.LagSpread, pr.cfg.Load())
		})
	} else {
		pr.out[ExpiryLag] = Cell{NA: "no timer (sweeps on demand)"}
	}
	return pr.out
}

// memoryAndRenew runs scenario 7 and then scenario 2 on the population the
// last memory run built, so that a million leases are granted once less.
func (pr *peerRun) memoryAndRenew() {
	n := pr.cfg.Size(Memory, pr.p)
	var keep Leaser
	var ids []ID
	pr.repeat(Memory, n, func(n int) (Sample, error) {
		if keep != nil {
			keep.Close()
			keep = nil
		}
		s, l, got, err := RunMemory(pr.p, n, 0)
		keep, ids = l, got
		return s, err
	})
	if keep == nil {
		pr.out[RenewLive] = Cell{Err: errors.New("no population: memory scenario failed")}
		return
	}
	defer keep.Close()
	pr.bench(RenewLive, len(ids), func(b *testing.B) { BenchRenew(b, keep, ids) })
	pr.bench(RenewRandom, len(ids), func(b *testing.B) { BenchRenewRandom(b, keep, ids) })
}

func (pr *peerRun) bench(s Scenario, n int, f func(b *testing.B)) {
	pr.repeat(s, n, func(int) (Sample, error) { return benchmark(pr.cfg.BenchTime, f) })
}

// repeat runs one scenario pr.runs times and keeps the median of each
// metric. It stops at the first failure.
func (pr *peerRun) repeat(s Scenario, n int, run func(n int) (Sample, error)) {
	c := Cell{N: n}
	for i := range pr.runs {
		smp, err := run(n)
		if errors.Is(err, ErrNotSupported) {
			pr.out[s] = Cell{NA: "not supported"}
			return
		}
		if err != nil {
			c.Err = err
			pr.logf("%v run %d: %v", s, i+1, err)
			break
		}
		pr.logf("%v run %d/%d (n=%d): %s", s, i+1, pr.runs, n, smp)
		c.Samples = append(c.Samples, smp)
	}
	c.Median = medianSample(c.Samples)
	pr.out[s] = c
}

func (pr *peerRun) logf(format string, args ...any) {
	if pr.log != nil {
		fmt.Fprintf(pr.log, "%-12s ", pr.p.Name)
		fmt.Fprintf(pr.log, format+"\n", args...)
	}
}

// medianSample returns the median of each metric over samples.
func medianSample(samples []Sample) Sample {
	if len(samples) == 0 {
		return nil
	}
	out := Sample{}
	for name := range samples[0] {
		vals := make([]float64, 0, len(samples))
		for _, s := range samples {
			vals = append(vals, s[name])
		}
		out[name] = median(vals)
	}
	return out
}

// median returns the middle value, or the mean of the two middle values.
func median(vals []float64) float64 {
	if len(vals) == 0 {
		return 0
	}
	v := slices.Sorted(slices.Values(vals))
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}

// String returns the scenario's short label.
func (s Scenario) String() string {
	for _, in := range Infos() {
		if in.Scenario == s {
			return in.Label
		}
	}
	return fmt.Sprintf("Scenario(%d)", int(s))
}

// String formats a sample as "name=value" pairs in a stable order.
func (s Sample) String() string {
	var out string
	for _, k := range slices.Sorted(maps.Keys(s)) {
		out += fmt.Sprintf(" %s=%.4g", k, s[k])
	}
	return out
}
