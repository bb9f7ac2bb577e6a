package sqlitecompare

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Run is one run of one queue, each phase on a fresh file.
type Run struct {
	// BurnDown is the items completed per second working off a backlog,
	// from Start to the last completion stored, one per Config.Workers.
	BurnDown []float64
	// BurnDownPerCommit is the items worked off per write transaction in
	// each burn-down, for a queue that counts its transactions (ours);
	// zero for the others.
	BurnDownPerCommit []float64
	// EnqueueBatch is the items per second of Config.Enqueue items added
	// Config.Batch per call, from one goroutine.
	EnqueueBatch float64
	// EnqueueSerial is the items per second of items added one per call by
	// one goroutine, EnqueueConcurrent by Config.Goroutines at once, and
	// ConcurrentPerCommit the items per write transaction of the latter
	// (zero for a queue that does not count them).
	EnqueueSerial, EnqueueConcurrent, ConcurrentPerCommit float64
	// PickupP50 and PickupP99 are the pickup latencies (the start of the
	// Enqueue call to the start of the handler) with the enqueuer in the
	// workers' process, CrossP50 and CrossP99 in another process on the
	// same file.
	PickupP50, PickupP99, CrossP50, CrossP99 time.Duration
}

// Column is the runs of one queue and their medians.
type Column struct {
	Queue  string
	Runs   []Run
	Median Run // each field the median of that field over Runs
}

// Report is what Measure found. It is a plain value: safe to read from
// many goroutines, not to change while they do.
type Report struct {
	Config Config
	// Floor is the commit floor of each run, one-row transactions per
	// second (see CommitFloor), and FloorMedian their median.
	Floor       []float64
	FloorMedian float64
	Columns     []Column
	// Load is the machine's load averages over 1, 5 and 15 minutes
	// (/proc/loadavg) as the measurement started and as it ended, or
	// empty where the system does not say: other work on the machine
	// skews the figures.
	Load [2]string
}

// transactionCounter is a System that counts its write transactions.
type transactionCounter interface{ Transactions() int64 }

// loadAverage returns the first three fields of /proc/loadavg, or "".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// Measure runs every queue cfg.Runs times, interleaved (each round
// measures the floor, then runs every queue once) so that drift of the
// machine spreads over all of them, and returns the medians. Every file
// is in a temporary directory of cfg.Dir, removed at the end.
func Measure(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	var queues []Queue
	for _, name := range cfg.Queues {
		q, ok := queueByName(name)
		if !ok {
			return nil, fmt.Errorf("sqlitecompare: no queue named %q", name)
		}
		if cfg.History > 0 || cfg.Retention {
			q = withRetention(q)
		}
		queues = append(queues, q)
	}
	dir, err := os.MkdirTemp(cfg.Dir, "sqlitecompare-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	rep := &Report{Config: cfg, Columns: make([]Column, len(queues))}
	rep.Load[0] = loadAverage()
	for i, q := range queues {
		rep.Columns[i].Queue = q.Name
	}
	// Each queue's schema is made once, in a template file that every
	// phase of every run copies: a fresh file, without the cost of
	// migrating it again (River's migrations take longer than some phases).
	templates := make([]string, len(queues))
	for i, q := range queues {
		templates[i] = filepath.Join(dir, fmt.Sprintf("template-q%d.db", i))
		if err := withSystem(ctx, cfg, q, templates[i], func(System) error { return nil }); err != nil {
			return nil, fmt.Errorf("sqlitecompare: %s: %w", q.Name, err)
		}
		if cfg.History > 0 && q.FillHistory != nil {
			d, err := loadHistory(ctx, cfg, q, templates[i], cfg.History)
			if err != nil {
				return nil, fmt.Errorf("sqlitecompare: %s: history: %w", q.Name, err)
			}
			cfg.progress("%s: %d finished items loaded in %s", q.Name, cfg.History, d)
		}
	}
	for r := range cfg.Runs {
		floor, err := CommitFloor(ctx, dir, cfg.Sync, cfg.Floor)
		if err != nil {
			return nil, fmt.Errorf("sqlitecompare: floor, run %d: %w", r+1, err)
		}
		rep.Floor = append(rep.Floor, floor)
		cfg.progress("floor run %d: %.0f commits/s (load %s)", r+1, floor, loadAverage())
		for i, q := range queues {
			run, err := measureOnce(ctx, cfg, filepath.Join(dir, fmt.Sprintf("run%d-q%d", r+1, i)), templates[i], q)
			if err != nil {
				return nil, fmt.Errorf("sqlitecompare: %s, run %d: %w", q.Name, r+1, err)
			}
			rep.Columns[i].Runs = append(rep.Columns[i].Runs, run)
		}
	}
	rep.FloorMedian = median(rep.Floor)
	for i := range rep.Columns {
		rep.Columns[i].Median = medianRun(rep.Columns[i].Runs)
	}
	rep.Load[1] = loadAverage()
	return rep, nil
}

func (c Config) progress(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", args...)
	}
}

// measureOnce is one Run of q, its files copies of template named from
// prefix.
func measureOnce(ctx context.Context, cfg Config, prefix, template string, q Queue) (Run, error) {
	var run Run
	file := func(phase string) string { return prefix + "-" + phase + ".db" }
	phaseFiles := []string{"enqueue-batch", "enqueue-serial", "enqueue-concurrent", "pickup", "pickup-cross"}
	for _, workers := range cfg.Workers {
		phaseFiles = append(phaseFiles, fmt.Sprintf("burndown%d", workers))
	}
	for _, p := range phaseFiles {
		if err := copyDatabase(template, file(p)); err != nil {
			return run, err
		}
	}
	for _, workers := range cfg.Workers {
		var rate, perCommit float64
		err := withSystem(ctx, cfg, q, file(fmt.Sprintf("burndown%d", workers)), func(sys System) error {
			var err error
			rate, perCommit, err = burnDown(ctx, cfg, sys, workers)
			return err
		})
		if err != nil {
			return run, fmt.Errorf("burn-down at %d workers: %w", workers, err)
		}
		run.BurnDown = append(run.BurnDown, rate)
		run.BurnDownPerCommit = append(run.BurnDownPerCommit, perCommit)
		cfg.progress("%s: burn-down at %d workers: %.0f items/s, %.1f items/commit (load %s)", q.Name, workers, rate, perCommit, loadAverage())
	}
	phases := []struct {
		name string
		f    func(System) error
	}{
		{"enqueue-batch", func(sys System) (err error) {
			run.EnqueueBatch, err = enqueueBatches(ctx, cfg, sys)
			return err
		}},
		{"enqueue-serial", func(sys System) (err error) {
			run.EnqueueSerial, _, err = enqueueOneByOne(ctx, cfg, sys, cfg.EnqueueOne/10, 1)
			return err
		}},
		{"enqueue-concurrent", func(sys System) (err error) {
			run.EnqueueConcurrent, run.ConcurrentPerCommit, err = enqueueOneByOne(ctx, cfg, sys, cfg.EnqueueOne, cfg.Goroutines)
			return err
		}},
		{"pickup", func(sys System) error {
			lat, err := pickup(ctx, cfg, sys, nil)
			run.PickupP50, run.PickupP99 = percentile(lat, 50), percentile(lat, 99)
			return err
		}},
		{"pickup-cross", func(sys System) error {
			child, err := startChild(ctx, q.Name, file("pickup-cross"), cfg.Sync)
			if err != nil {
				return err
			}
			lat, err := pickup(ctx, cfg, sys, child)
			run.CrossP50, run.CrossP99 = percentile(lat, 50), percentile(lat, 99)
			return errors.Join(err, child.close())
		}},
	}
	for _, p := range phases {
		if err := withSystem(ctx, cfg, q, file(p.name), p.f); err != nil {
			return run, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	cfg.progress("%s: enqueue batched %.0f/s, one by one %.0f/s (1 goroutine) %.0f/s (%d goroutines, %.1f items/commit); pickup p50 %s p99 %s, across processes p50 %s p99 %s (load %s)",
		q.Name, run.EnqueueBatch, run.EnqueueSerial, run.EnqueueConcurrent, cfg.Goroutines, run.ConcurrentPerCommit,
		run.PickupP50, run.PickupP99, run.CrossP50, run.CrossP99, loadAverage())
	return run, nil
}

// copyDatabase copies the SQLite file at from, closed by every
// connection, and its write-ahead log if one is left, to a new file to.
func copyDatabase(from, to string) error {
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(from + suffix)
		if errors.Is(err, os.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(to+suffix, b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// withSystem opens q on the file at path, calls f, then stops the
// System whatever f returned. The file is created if it does not exist.
func withSystem(ctx context.Context, cfg Config, q Queue, path string, f func(System) error) (err error) {
	sys, err := q.Open(ctx, path, cfg.Sync)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Timeout)
		defer cancel()
		if serr := sys.Stop(sctx); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop: %w", serr))
		}
	}()
	return f(sys)
}

// transactions returns sys's count of write transactions, and whether it
// keeps one.
func transactions(sys System) (int64, bool) {
	if tc, ok := sys.(transactionCounter); ok {
		return tc.Transactions(), true
	}
	return 0, false
}

// perCommit is items over the transactions since tx0, or zero for a
// System that does not count them.
func perCommit(sys System, tx0 int64, items int) float64 {
	tx1, ok := transactions(sys)
	if !ok || tx1 == tx0 {
		return 0
	}
	return float64(items) / float64(tx1-tx0)
}

// burnDown enqueues cfg.BurnDown items in batches, then works them all
// off with workers workers, and returns the rate of the latter and the
// items per commit.
func burnDown(ctx context.Context, cfg Config, sys System, workers int) (rate, itemsPerCommit float64, err error) {
	ectx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	for left := cfg.BurnDown; left > 0; left -= cfg.Batch {
		if err := sys.EnqueueBatch(ectx, min(left, cfg.Batch)); err != nil {
			return 0, 0, fmt.Errorf("enqueue: %w", err)
		}
	}
	done := newCounter()
	reached := done.await(int64(cfg.BurnDown))
	ran := newTally(cfg.BurnDown)
	tx0, _ := transactions(sys)
	start := time.Now()
	if err := sys.Start(ctx, workers, Observer{Started: ran.add, Completed: done.add}); err != nil {
		return 0, 0, fmt.Errorf("start: %w", err)
	}
	if err := wait(ctx, reached, cfg.Timeout, "burn-down"); err != nil {
		return 0, 0, fmt.Errorf("%w (%d of %d completed)", err, done.n.Load(), cfg.BurnDown)
	}
	if err := sys.Settled(ectx); err != nil {
		return 0, 0, fmt.Errorf("settled: %w", err)
	}
	rate = float64(cfg.BurnDown) / time.Since(start).Seconds()
	if err := ran.exactlyOnce(cfg.BurnDown); err != nil {
		return 0, 0, fmt.Errorf("burn-down: %w", err)
	}
	return rate, perCommit(sys, tx0, cfg.BurnDown), nil
}

// tally counts the handler runs of each item, by ID.
type tally struct {
	mu   sync.Mutex
	runs map[uint64]int
}

func newTally(n int) *tally { return &tally{runs: make(map[uint64]int, n)} }

// add counts a run of item id.
func (t *tally) add(id uint64) {
	t.mu.Lock()
	t.runs[id]++
	t.mu.Unlock()
}

// exactlyOnce reports an error unless n distinct items ran, each once.
func (t *tally) exactlyOnce(n int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	again := 0
	for _, c := range t.runs {
		if c != 1 {
			again++
		}
	}
	if len(t.runs) != n || again != 0 {
		return fmt.Errorf("%d distinct items ran, want %d; %d of them more than once", len(t.runs), n, again)
	}
	return nil
}

// enqueueBatches adds cfg.Enqueue items, cfg.Batch per call, and returns
// the rate.
func enqueueBatches(ctx context.Context, cfg Config, sys System) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	start := time.Now()
	for left := cfg.Enqueue; left > 0; left -= cfg.Batch {
		if err := sys.EnqueueBatch(ctx, min(left, cfg.Batch)); err != nil {
			return 0, err
		}
	}
	return float64(cfg.Enqueue) / time.Since(start).Seconds(), nil
}

// enqueueOneByOne adds n items one per call from goroutines goroutines at
// once, and returns the rate and the items per commit.
func enqueueOneByOne(ctx context.Context, cfg Config, sys System, n, goroutines int) (rate, itemsPerCommit float64, err error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	n = max(n, 1)
	var next atomic.Int64
	errs := make([]error, goroutines)
	tx0, _ := transactions(sys)
	start := time.Now()
	done := make(chan struct{})
	var running atomic.Int64
	running.Store(int64(goroutines))
	for g := range goroutines {
		go func() {
			defer func() {
				if running.Add(-1) == 0 {
					close(done)
				}
			}()
			for next.Add(1) <= int64(n) {
				if err := sys.EnqueueOne(ctx); err != nil {
					errs[g] = err
					return
				}
			}
		}()
	}
	<-done
	rate = float64(n) / time.Since(start).Seconds()
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}
	return rate, perCommit(sys, tx0, n), nil
}

// percentile returns the p-th percentile of ds by the nearest-rank
// method.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100 // ceil(p/100 * n), from 1
	return s[max(rank, 1)-1]
}

// median returns the median of xs (the mean of the middle two for an even
// count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// medianRun is the field-wise median of runs.
func medianRun(runs []Run) Run {
	field := func(f func(Run) float64) float64 {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = f(r)
		}
		return median(xs)
	}
	dur := func(f func(Run) time.Duration) time.Duration {
		return time.Duration(field(func(r Run) float64 { return float64(f(r)) }))
	}
	var m Run
	if len(runs) > 0 {
		for i := range runs[0].BurnDown {
			m.BurnDown = append(m.BurnDown, field(func(r Run) float64 { return r.BurnDown[i] }))
			m.BurnDownPerCommit = append(m.BurnDownPerCommit, field(func(r Run) float64 { return r.BurnDownPerCommit[i] }))
		}
	}
	m.EnqueueBatch = field(func(r Run) float64 { return r.EnqueueBatch })
	m.EnqueueSerial = field(func(r Run) float64 { return r.EnqueueSerial })
	m.EnqueueConcurrent = field(func(r Run) float64 { return r.EnqueueConcurrent })
	m.ConcurrentPerCommit = field(func(r Run) float64 { return r.ConcurrentPerCommit })
	m.PickupP50 = dur(func(r Run) time.Duration { return r.PickupP50 })
	m.PickupP99 = dur(func(r Run) time.Duration { return r.PickupP99 })
	m.CrossP50 = dur(func(r Run) time.Duration { return r.CrossP50 })
	m.CrossP99 = dur(func(r Run) time.Duration { return r.CrossP99 })
	return m
}
