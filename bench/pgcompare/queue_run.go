package pgcompare

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Config sizes a measurement. The zero value of a field means its default.
// A Config is read-only once Measure is called.
type Config struct {
	// DSN is the server to measure on. Measure creates a database on it
	// for each run and drops it afterwards, so the role needs CREATEDB.
	DSN string
	// N is the number of items enqueued and then burnt down in each run.
	// Default 100,000.
	N int
	// Batch is how many items one Enqueue call adds. Default 5,000.
	Batch int
	// Pickup is the number of items whose pickup latency each run
	// measures, after PickupWarmup unmeasured ones. Defaults 200 and 5.
	Pickup, PickupWarmup int
	// TxItems is how many items one caller transaction enqueues, for the
	// Systems that are TxEnqueuers, and TxRounds how many such
	// transactions each run times. Defaults 1,000 and 5.
	TxItems, TxRounds int
	// Runs is how many times each setting is measured. Default 3.
	Runs int
	// History lists how many finished items each setting's databases hold
	// before a run starts (bulk-loaded as completed rows its store keeps,
	// then VACUUM ANALYZE), one row of the report per setting and size;
	// 0 is an empty table. Every setting measured with a size above 0 must
	// be a HistoryFiller. Default {0}.
	History []int
	// Timeout bounds each phase of a run (enqueue, burn-down, one pickup).
	// Default 10 minutes.
	Timeout time.Duration
	// Progress, if not nil, gets a line for each finished run.
	Progress io.Writer

	label string // the setting measured, for CPUEnv's lines
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.N, 100_000)
	def(&c.Batch, 5_000)
	def(&c.Pickup, 200)
	def(&c.PickupWarmup, 5)
	def(&c.Runs, 3)
	def(&c.TxItems, 1_000)
	def(&c.TxRounds, 5)
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Minute
	}
	if len(c.History) == 0 {
		c.History = []int{0}
	}
	return c
}

// Run is one run of one setting: a bulk enqueue and burn-down of N items
// on one fresh database followed by pickup latencies on it, pickup
// latencies into an idle queue on another, and transactional enqueues on
// a third (TxEnqueuers only).
type Run struct {
	EnqueuePerSec  float64       // items enqueued per second
	BurnDownPerSec float64       // items completed per second, from Start to the last completion
	PickupP50      time.Duration // pickup latency into an idle queue, median
	PickupP99      time.Duration // pickup latency into an idle queue, 99th percentile
	// PickupAfterP50 and PickupAfterP99 are the pickup latencies right
	// after the burn-down, on its database, with the same workers.
	PickupAfterP50, PickupAfterP99 time.Duration
	// TxEnqueue is the median time of one caller transaction that
	// enqueues TxItems items: begin, EnqueueTx, commit. Zero for a
	// System that is not a TxEnqueuer.
	TxEnqueue time.Duration
	// Fill is how long bulk-loading the history (Row.History rows, and
	// VACUUM ANALYZE) took on the burn-down's database; zero without.
	Fill time.Duration
	// TableBytes is the size of the System's table with its indexes and
	// TOAST holding the history (pg_total_relation_size of the template,
	// after VACUUM ANALYZE); zero without a history.
	TableBytes int64
	// Queues and Counts are the median times of the store's Queues call
	// and of its Counts of the measured queue, on the idle queue's
	// database with its history; zero for a System that is not a
	// StatsTimer.
	Queues, Counts time.Duration
}

// Row is the runs of one setting and their medians.
type Row struct {
	Setting  string
	PoolSize int // the pgx pool's MaxConns
	History  int // finished items in the tables before each run (Config.History)
	Pickup   int // pickups each run measured: Setting.Pickup, or Config.Pickup
	Runs     []Run
	Median   Run // each field the median of that field over Runs
}

// Report is what Measure found, with the server settings it ran under.
// It is a plain value: safe to read from many goroutines, not to change
// while they do.
type Report struct {
	Config Config
	Server map[string]string // SHOW results: server_version, fsync, synchronous_commit, ...
	Rows   []Row
	// Load is the machine's load averages over 1, 5 and 15 minutes
	// (/proc/loadavg) as the measurement started and as it ended, or
	// empty where the system does not say: other work on the machine
	// skews the figures.
	Load [2]string
}

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

// serverSettings are the settings a Report records.
var serverSettings = []string{"server_version", "fsync", "synchronous_commit", "shared_buffers", "max_connections"}

// Measure runs every setting cfg.Runs times, interleaved (each round runs
// every setting once) so that drift of the machine spreads over all of
// them, and returns the medians.
func Measure(ctx context.Context, cfg Config, settings []Setting) (*Report, error) {
	cfg = cfg.withDefaults()
	if cfg.DSN == "" {
		return nil, errors.New("pgcompare: Config.DSN is empty")
	}
	admin, err := pgx.Connect(ctx, cfg.DSN)
	if err != nil {
		return nil, err
	}
	defer func() { _ = admin.Close(context.WithoutCancel(ctx)) }()
	rep := &Report{Config: cfg, Server: map[string]string{}}
	for _, name := range serverSettings {
		var v string
		if err := admin.QueryRow(ctx, "SHOW "+name).Scan(&v); err != nil {
			return nil, fmt.Errorf("pgcompare: SHOW %s: %w", name, err)
		}
		rep.Server[name] = v
	}
	rep.Load[0] = loadAverage()
	// Rows go setting by setting, each at every history size; rounds go
	// size by size, each running every setting.
	rep.Rows = make([]Row, len(settings)*len(cfg.History))
	row := func(setting, size int) *Row { return &rep.Rows[setting*len(cfg.History)+size] }
	for i, s := range settings {
		for j, h := range cfg.History {
			r := row(i, j)
			r.Setting, r.PoolSize, r.History, r.Pickup = s.Name, max(s.PoolSize, 1), h, cmp.Or(s.Pickup, cfg.Pickup)
		}
	}
	// Each setting's history of each size is loaded once, into a template
	// database that every database of every run copies (CREATE DATABASE
	// ... TEMPLATE, a file copy): a million rows take longer to insert and
	// VACUUM than a run takes, and every run then starts from the same
	// table, statistics and visibility map.
	templates := make(map[[2]int]template)
	defer func() {
		for _, t := range templates {
			_, _ = admin.Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+t.db+" WITH (FORCE)")
		}
	}()
	for j, h := range cfg.History {
		if h == 0 {
			continue
		}
		for i, s := range settings {
			t, err := makeTemplate(ctx, cfg, admin, s, h)
			if err != nil {
				return nil, fmt.Errorf("pgcompare: %s, history %d: %w", s.Name, h, err)
			}
			templates[[2]int{i, j}] = t
			if cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "%s: %d finished rows loaded and VACUUM ANALYZEd in %s\n", s.Name, h, t.fill)
			}
		}
	}
	if len(templates) > 0 {
		// The loads leave hundreds of megabytes of dirty pages: written
		// now, not by the checkpointer during the first runs.
		if _, err := admin.Exec(ctx, "CHECKPOINT"); err != nil {
			return nil, fmt.Errorf("pgcompare: checkpoint after the history loads: %w", err)
		}
	}
	for r := range cfg.Runs {
		for j, h := range cfg.History {
			for i, s := range settings {
				run, err := measureOnce(ctx, cfg, admin, s, templates[[2]int{i, j}])
				if err != nil {
					name := s.Name
					if h > 0 {
						name = fmt.Sprintf("%s, history %d", s.Name, h)
					}
					return nil, fmt.Errorf("pgcompare: %s, run %d: %w", name, r+1, err)
				}
				row(i, j).Runs = append(row(i, j).Runs, run)
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "%s, history %d, run %d: fill %s, enqueue %.0f items/s, tx enqueue of %d %s, burn-down %.0f jobs/s, pickup p50 %s p99 %s, after burn-down p50 %s p99 %s, Queues %s, Counts %s (load %s)\n",
						s.Name, h, r+1, run.Fill, run.EnqueuePerSec, cfg.TxItems, run.TxEnqueue, run.BurnDownPerSec, run.PickupP50, run.PickupP99,
						run.PickupAfterP50, run.PickupAfterP99, run.Queues, run.Counts, loadAverage())
				}
			}
		}
	}
	for i := range rep.Rows {
		rep.Rows[i].Median = medianRun(rep.Rows[i].Runs)
	}
	rep.Load[1] = loadAverage()
	return rep, nil
}

// measureOnce is one Run of s, each database a copy of tpl (empty ones
// if tpl is the zero template).
func measureOnce(ctx context.Context, cfg Config, admin *pgx.Conn, s Setting, tpl template) (Run, error) {
	if s.Pickup > 0 {
		cfg.Pickup = s.Pickup
	}
	cfg.label = s.Name
	run := Run{Fill: tpl.fill, TableBytes: tpl.bytes}
	err := withSystem(ctx, cfg, admin, s, tpl, func(sys System, _ *pgxpool.Pool) error {
		var (
			r   relay
			err error
		)
		run.EnqueuePerSec, run.BurnDownPerSec, err = burnDown(ctx, cfg, sys, &r)
		if err != nil {
			return err
		}
		lat, err := pickupLoop(ctx, cfg, sys, &r)
		if err != nil {
			return fmt.Errorf("after burn-down: %w", err)
		}
		run.PickupAfterP50, run.PickupAfterP99 = percentile(lat, 50), percentile(lat, 99)
		return nil
	})
	if err != nil {
		return run, err
	}
	err = withSystem(ctx, cfg, admin, s, tpl, func(sys System, _ *pgxpool.Pool) error {
		if st, ok := sys.(StatsTimer); ok {
			var err error
			if run.Queues, run.Counts, err = st.TimeStats(ctx); err != nil {
				return fmt.Errorf("stats: %w", err)
			}
		}
		lat, err := pickup(ctx, cfg, sys)
		if err != nil {
			return err
		}
		run.PickupP50, run.PickupP99 = percentile(lat, 50), percentile(lat, 99)
		return nil
	})
	if err != nil {
		return run, err
	}
	err = withSystem(ctx, cfg, admin, s, tpl, func(sys System, pool *pgxpool.Pool) error {
		var err error
		run.TxEnqueue, err = txEnqueue(ctx, cfg, sys, pool)
		return err
	})
	return run, err
}

// template is a database holding a setting's history, which withSystem
// copies; the zero template stands for an empty database.
type template struct {
	db   string        // the database's name; "" for none
	fill time.Duration // how long loading the history and VACUUM ANALYZE took
	// bytes is the table's size with its indexes once loaded.
	bytes int64
}

// makeTemplate creates a database, opens s on it (which migrates it),
// loads history finished items into it, stops s and closes every
// connection to it, so that withSystem can copy it.
func makeTemplate(ctx context.Context, cfg Config, admin *pgx.Conn, s Setting, history int) (t template, err error) {
	t.db = fmt.Sprintf("pgcompare_template_%d_%d", os.Getpid(), dbSeq.Add(1))
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+t.db); err != nil {
		return template{}, err
	}
	defer func() {
		if err != nil {
			_, derr := admin.Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+t.db+" WITH (FORCE)")
			err = errors.Join(err, derr)
		}
	}()
	pool, sys, err := openSystem(ctx, cfg, s, t.db)
	if err != nil {
		return t, err
	}
	defer pool.Close() // before the copy: CREATE DATABASE refuses a template with connections
	t0 := time.Now()
	table, err := loadHistory(ctx, cfg, sys, pool, history)
	t.fill = time.Since(t0)
	if err == nil {
		err = pool.QueryRow(ctx, "SELECT pg_total_relation_size($1::text::regclass)", table).Scan(&t.bytes)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Timeout)
	defer cancel()
	if serr := sys.Stop(sctx); serr != nil {
		err = errors.Join(err, fmt.Errorf("stop: %w", serr))
	}
	return t, err
}

// openSystem opens a pool of s's size on database db and s on it.
func openSystem(ctx context.Context, cfg Config, s Setting, db string) (*pgxpool.Pool, System, error) {
	pcfg, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, nil, err
	}
	pcfg.ConnConfig.Database = db
	pcfg.MaxConns = int32(max(s.PoolSize, 1)) // as Row.PoolSize
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, nil, err
	}
	sys, err := s.Open(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("open: %w", err)
	}
	return pool, sys, nil
}

var dbSeq atomic.Int64

// withSystem creates a fresh database, empty or a copy of tpl, opens s
// on it, calls f, then stops the System and drops the database whatever f
// returned.
func withSystem(ctx context.Context, cfg Config, admin *pgx.Conn, s Setting, tpl template, f func(System, *pgxpool.Pool) error) (err error) {
	db := fmt.Sprintf("pgcompare_queues_%d_%d", os.Getpid(), dbSeq.Add(1))
	create := "CREATE DATABASE " + db
	if tpl.db != "" {
		// A file copy of the template's directory, not its pages written
		// through the WAL (PostgreSQL 15's default): the cheaper copy of a
		// large history.
		create += " TEMPLATE " + tpl.db + " STRATEGY FILE_COPY"
	}
	if _, err := admin.Exec(ctx, create); err != nil {
		return err
	}
	cleanup := context.WithoutCancel(ctx)
	defer func() {
		_, derr := admin.Exec(cleanup, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
		err = errors.Join(err, derr)
	}()
	pool, sys, err := openSystem(ctx, cfg, s, db)
	if err != nil {
		return err
	}
	defer pool.Close()
	defer func() {
		sctx, cancel := context.WithTimeout(cleanup, cfg.Timeout)
		defer cancel()
		if serr := sys.Stop(sctx); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop: %w", serr))
		}
	}()
	return f(sys, pool)
}

// HistoryFiller is a System that can bulk-load finished items into its
// table, as its library keeps the items it completed.
type HistoryFiller interface {
	// FillHistory inserts n items finished within the last hour, kept by
	// the library's retention, into the System's table in one statement,
	// and returns the table's name.
	FillHistory(ctx context.Context, pool *pgxpool.Pool, n int) (table string, err error)
}

// StatsTimer is a System whose store answers the questions a dashboard
// asks (the queues and their counts), and that times them.
type StatsTimer interface {
	// TimeStats returns the median times of the store's Queues call and
	// of its Counts of the measured queue, over a few calls each.
	TimeStats(ctx context.Context) (queues, counts time.Duration, err error)
}

// loadHistory fills sys's table with n finished items and VACUUM
// ANALYZEs it, and returns the table's name, so that the run starts on a table as a long-running
// queue's looks: its history, and statistics that know it.
func loadHistory(ctx context.Context, cfg Config, sys System, pool *pgxpool.Pool, n int) (string, error) {
	hf, ok := sys.(HistoryFiller)
	if !ok {
		return "", errors.New("history: the system cannot be filled with finished items")
	}
	hctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	table, err := hf.FillHistory(hctx, pool, n)
	if err != nil {
		return "", fmt.Errorf("history: %w", err)
	}
	if _, err := pool.Exec(hctx, "VACUUM ANALYZE "+table); err != nil {
		return "", fmt.Errorf("history: vacuum: %w", err)
	}
	return table, nil
}

// counter counts completions and closes reached when the count gets to
// target.
type counter struct {
	n       atomic.Int64
	target  atomic.Int64
	mu      sync.Mutex
	reached chan struct{}
}

func newCounter() *counter { return &counter{reached: make(chan struct{})} }

// await arms c for target completions in all and returns the channel
// closed when they are reached.
func (c *counter) await(target int64) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reached = make(chan struct{})
	c.target.Store(target)
	if c.n.Load() >= target {
		close(c.reached)
	}
	return c.reached
}

func (c *counter) add() {
	if c.n.Add(1) != c.target.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.reached:
	default:
		close(c.reached)
	}
}

// wait waits for ch, ctx or timeout, whichever comes first.
func wait(ctx context.Context, ch <-chan struct{}, timeout time.Duration, what string) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("%s: not done after %s", what, timeout)
	}
}

// burnDown enqueues cfg.N items in batches, then starts the workers with
// r's observer, waits for them to work every item off, and returns both
// rates. The workers keep running, so that r can serve the next phase.
func burnDown(ctx context.Context, cfg Config, sys System, r *relay) (enqueue, work float64, err error) {
	ectx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	start := time.Now()
	for left := cfg.N; left > 0; left -= cfg.Batch {
		if err := sys.Enqueue(ectx, min(left, cfg.Batch)); err != nil {
			return 0, 0, fmt.Errorf("enqueue: %w", err)
		}
	}
	enqueue = float64(cfg.N) / time.Since(start).Seconds()

	probe := startCPU(ctx, cfg.DSN, cfg.label, cfg.N)
	defer probe.stop()
	done := newCounter()
	reached := done.await(int64(cfg.N))
	ran := newTally(cfg.N)
	start = time.Now()
	r.set(Observer{Started: ran.add, Completed: done.add})
	if err := sys.Start(ctx, r.observer()); err != nil {
		return 0, 0, fmt.Errorf("start: %w", err)
	}
	if err := wait(ctx, reached, cfg.Timeout, "burn-down"); err != nil {
		return 0, 0, fmt.Errorf("%w (%d of %d completed)", err, done.n.Load(), cfg.N)
	}
	sctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if err := sys.Settled(sctx); err != nil {
		return 0, 0, fmt.Errorf("settled: %w", err)
	}
	work = float64(cfg.N) / time.Since(start).Seconds()
	if err := ran.exactlyOnce(cfg.N); err != nil {
		return 0, 0, fmt.Errorf("burn-down: %w", err)
	}
	return enqueue, work, nil
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

// pickup starts the workers on an empty queue and enqueues items one at a
// time, each once the previous one's completion is stored (System.Settled)
// so that the queue is idle, and returns for each measured item the time
// from the start of its Enqueue call to the start of its handler. Without
// that wait the next Enqueue's commit would meet the previous item's
// settlement still under way, and its WAL flush wait behind that one.
func pickup(ctx context.Context, cfg Config, sys System) ([]time.Duration, error) {
	var r relay
	r.set(Observer{Started: func(uint64) {}, Completed: func() {}})
	if err := sys.Start(ctx, r.observer()); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	return pickupLoop(ctx, cfg, sys, &r)
}

// pickupLoop is pickup on a System already started with r's observer.
func pickupLoop(ctx context.Context, cfg Config, sys System, r *relay) ([]time.Duration, error) {
	started := make(chan time.Time, 1)
	done := newCounter()
	obs := Observer{
		Started: func(uint64) {
			select {
			case started <- time.Now():
			default: // a second start before the harness read the first: the check below reports it
			}
		},
		Completed: done.add,
	}
	r.set(obs)
	lat := make([]time.Duration, 0, cfg.Pickup)
	for i := range cfg.PickupWarmup + cfg.Pickup {
		reached := done.await(int64(i + 1))
		t0 := time.Now()
		ectx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		err := sys.Enqueue(ectx, 1)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("enqueue: %w", err)
		}
		var t1 time.Time
		t := time.NewTimer(cfg.Timeout)
		select {
		case t1 = <-started:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
			return nil, fmt.Errorf("pickup of item %d: not started after %s", i+1, cfg.Timeout)
		}
		t.Stop()
		if err := wait(ctx, reached, cfg.Timeout, fmt.Sprintf("pickup of item %d", i+1)); err != nil {
			return nil, err
		}
		sctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		err = sys.Settled(sctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("pickup of item %d: settled: %w", i+1, err)
		}
		if i >= cfg.PickupWarmup {
			lat = append(lat, t1.Sub(t0))
		}
	}
	if len(started) != 0 || done.n.Load() != int64(cfg.PickupWarmup+cfg.Pickup) {
		return nil, fmt.Errorf("pickup: an item was handled or completed more than once (%d completions)", done.n.Load())
	}
	return lat, nil
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
	return Run{
		EnqueuePerSec:  field(func(r Run) float64 { return r.EnqueuePerSec }),
		BurnDownPerSec: field(func(r Run) float64 { return r.BurnDownPerSec }),
		PickupP50:      time.Duration(field(func(r Run) float64 { return float64(r.PickupP50) })),
		PickupP99:      time.Duration(field(func(r Run) float64 { return float64(r.PickupP99) })),
		PickupAfterP50: time.Duration(field(func(r Run) float64 { return float64(r.PickupAfterP50) })),
		PickupAfterP99: time.Duration(field(func(r Run) float64 { return float64(r.PickupAfterP99) })),
		TxEnqueue:      time.Duration(field(func(r Run) float64 { return float64(r.TxEnqueue) })),
		Fill:           time.Duration(field(func(r Run) float64 { return float64(r.Fill) })),
		TableBytes:     int64(field(func(r Run) float64 { return float64(r.TableBytes) })),
		Queues:         time.Duration(field(func(r Run) float64 { return float64(r.Queues) })),
		Counts:         time.Duration(field(func(r Run) float64 { return float64(r.Counts) })),
	}
}
