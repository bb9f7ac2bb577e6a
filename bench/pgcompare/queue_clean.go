package pgcompare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/postgres"
)

// CleanConfig sizes a measurement of the claim store's retention cleaner
// running beside claims. The zero value of a field means its default. It
// is read-only once MeasureCleaner is called.
type CleanConfig struct {
	// DSN is the server, as Config.DSN.
	DSN string
	// Rows is how many completed items, past their retention, the cleaner
	// removes in each run. Default 1,000,000.
	Rows int
	// Batch is the limit of each Clean call. Default
	// claim.DefaultCleanBatch.
	Batch int
	// Pause is the wait between two Clean calls, as
	// claim.CleanerConfig.Pause: 0 waits as long as the previous call
	// took, as Broker.RunCleaner does by default; negative, not at all.
	Pause time.Duration
	// Claimers is how many goroutines claim while the cleaner runs, each
	// in a loop of enqueue one item, claim it, complete it. Default 4.
	// Unused with Rate.
	Claimers int
	// Rate, if above 0, replaces the claimers with a steady load: Rate
	// items a second enqueued (a batch every 10 ms) and worked off by
	// Broker.Work with RateWorkers handlers; the claim latencies are then
	// those of Work's Claim calls.
	Rate int
	// RateWorkers is the handlers of the steady load. Default 100.
	RateWorkers int
	// Before is how long the claimers run before the cleaner starts, the
	// baseline; with Rate, counted from the steady load's first item.
	// Default 3 s.
	Before time.Duration
	// Runs is how many times it is measured. Default 3.
	Runs int
	// Timeout bounds each phase of a run. Default 10 minutes.
	Timeout time.Duration
	// Progress, if not nil, gets a line for each finished run.
	Progress io.Writer
}

func (c CleanConfig) withDefaults() CleanConfig {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Rows, 1_000_000)
	def(&c.Batch, claim.DefaultCleanBatch)
	def(&c.Claimers, 4)
	def(&c.RateWorkers, 100)
	def(&c.Runs, 3)
	if c.Before <= 0 {
		c.Before = 3 * time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Minute
	}
	return c
}

// Latencies summarises the durations of claim calls.
type Latencies struct {
	Count         int
	P50, P99, Max time.Duration
	// Over10ms counts the calls that took longer than 10 ms.
	Over10ms int
}

// summarise returns the Latencies of ds.
func summarise(ds []time.Duration) Latencies {
	l := Latencies{Count: len(ds), P50: percentile(ds, 50), P99: percentile(ds, 99)}
	if len(ds) > 0 {
		l.Max = slices.Max(ds)
	}
	for _, d := range ds {
		if d > 10*time.Millisecond {
			l.Over10ms++
		}
	}
	return l
}

// CleanRun is one run of the cleaner.
type CleanRun struct {
	// Clean is how long the cleaner took to remove CleanConfig.Rows rows,
	// from the first Clean call to the one that found none left.
	Clean time.Duration
	// Before and During are the claim calls' durations before the cleaner
	// started and while it ran.
	Before, During Latencies
	// RateBefore and RateDuring are the items completed per second in
	// those phases.
	RateBefore, RateDuring float64
	// Waits counts, while the cleaner ran, what the claim statements
	// were seen waiting on (pg_stat_activity's wait_event_type:wait_event,
	// sampled every millisecond); "running" when on CPU or not waiting.
	Waits map[string]int
}

// CleanReport is what MeasureCleaner found: a plain value, safe to read
// from many goroutines.
type CleanReport struct {
	Config CleanConfig
	Runs   []CleanRun
	Median CleanRun // each field the median over Runs
	Load   [2]string
}

// MeasureCleaner measures the claim store's retention cleaner: each run
// fills a fresh database with cfg.Rows completed items whose retention
// has passed, starts cfg.Claimers claim loops, and after cfg.Before runs
// Broker.Clean in a loop, pausing between calls as Broker.RunCleaner does
// in each round, until it removes nothing more. It reports how long that took and the claim
// latencies before and during it.
func MeasureCleaner(ctx context.Context, cfg CleanConfig) (*CleanReport, error) {
	cfg = cfg.withDefaults()
	if cfg.DSN == "" {
		return nil, errors.New("pgcompare: CleanConfig.DSN is empty")
	}
	admin, err := pgx.Connect(ctx, cfg.DSN)
	if err != nil {
		return nil, err
	}
	defer func() { _ = admin.Close(context.WithoutCancel(ctx)) }()
	rep := &CleanReport{Config: cfg}
	rep.Load[0] = loadAverage()
	for r := range cfg.Runs {
		var run CleanRun
		setting := Setting{Name: "cleaner", PoolSize: cleanPoolSize(cfg), Open: func(context.Context, *pgxpool.Pool) (System, error) { return nopSystem{}, nil }}
		qcfg := Config{DSN: cfg.DSN, Timeout: cfg.Timeout}
		err := withSystem(ctx, qcfg, admin, setting, template{}, func(_ System, pool *pgxpool.Pool) error {
			var err error
			run, err = cleanOnce(ctx, cfg, pool)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("pgcompare: cleaner, run %d: %w", r+1, err)
		}
		rep.Runs = append(rep.Runs, run)
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "cleaner run %d: %d rows in %s; claims before: %+v; during: %+v; claim waits %v (load %s)\n",
				r+1, cfg.Rows, run.Clean, run.Before, run.During, run.Waits, loadAverage())
		}
	}
	rep.Median = medianCleanRun(rep.Runs)
	rep.Load[1] = loadAverage()
	return rep, nil
}

// nopSystem lets withSystem manage a database that MeasureCleaner fills
// itself.
type nopSystem struct{}

func (nopSystem) Enqueue(context.Context, int) error    { return nil }
func (nopSystem) Start(context.Context, Observer) error { return nil }
func (nopSystem) Settled(context.Context) error         { return nil }
func (nopSystem) Stop(context.Context) error            { return nil }

// cleanOnce is one CleanRun on the empty database pool points to.
func cleanOnce(ctx context.Context, cfg CleanConfig, pool *pgxpool.Pool) (CleanRun, error) {
	var run CleanRun
	// Completed items are kept an hour: those the claimers complete stay,
	// and only the rows filled in below, finished two hours ago, are due.
	store, err := postgres.NewClaimStore(pool, postgres.WithRetention(claim.Retention{Completed: time.Hour}))
	if err != nil {
		return run, err
	}
	if err := store.Migrate(ctx); err != nil {
		return run, fmt.Errorf("migrate: %w", err)
	}
	b := lease.Must(claim.New(store))
	defer func() { _ = b.Close() }()
	fctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if err := insertFinished(fctx, pool, store.Table(), ourQueue+"_done", cfg.Rows, 2*time.Hour); err != nil {
		return run, fmt.Errorf("fill: %w", err)
	}
	if _, err := pool.Exec(fctx, "VACUUM ANALYZE "+store.Table()); err != nil {
		return run, fmt.Errorf("vacuum: %w", err)
	}

	var cleaning atomic.Bool
	halt := startClaimers(fctx, cfg, b, &cleaning)
	if cfg.Rate > 0 {
		var flowing <-chan struct{}
		halt, flowing = startSteady(fctx, cfg, store, &cleaning)
		// The baseline starts once the load runs: the first items wait
		// for the broker's first claims and its listening connection,
		// which on a busy machine can take longer than the baseline.
		select {
		case <-flowing:
		case <-fctx.Done():
			_, err := halt()
			return run, errors.Join(fctx.Err(), err)
		}
	}
	t0 := time.Now()
	select {
	case <-time.After(cfg.Before):
	case <-fctx.Done():
		_, err := halt()
		return run, errors.Join(fctx.Err(), err)
	}
	before := time.Since(t0)
	cleaning.Store(true)
	sampled := make(chan map[string]int, 1)
	sctx, stopSampling := context.WithCancel(fctx)
	go func() { sampled <- sampleClaimWaits(sctx, pool) }()
	t0 = time.Now()
	removed := 0
	for {
		c0 := time.Now()
		n, err := b.Clean(fctx, cfg.Batch)
		took := time.Since(c0)
		if err != nil {
			stopSampling()
			<-sampled
			_, herr := halt()
			return run, errors.Join(fmt.Errorf("clean: %w", err), herr)
		}
		removed += n
		if n < cfg.Batch {
			break
		}
		pause := cfg.Pause
		if pause == 0 {
			pause = took
		}
		if pause > 0 {
			time.Sleep(pause)
		}
	}
	run.Clean = time.Since(t0)
	stopSampling()
	run.Waits = <-sampled
	phases, err := halt()
	if err != nil {
		return run, err
	}
	if removed != cfg.Rows {
		return run, fmt.Errorf("clean removed %d rows, want %d", removed, cfg.Rows)
	}
	run.Before, run.During = summarise(phases[0].claims), summarise(phases[1].claims)
	run.RateBefore = float64(phases[0].completed) / before.Seconds()
	run.RateDuring = float64(phases[1].completed) / run.Clean.Seconds()
	return run, nil
}

// phase is what the load did before the cleaner started (phase 0) or
// while it ran (phase 1): its claim calls' durations and its
// completions.
type phase struct {
	claims    []time.Duration
	completed int
}

// startClaimers starts cfg.Claimers claim loops and returns the function
// that stops them and returns what they did in each phase.
func startClaimers(ctx context.Context, cfg CleanConfig, b *claim.Broker, cleaning *atomic.Bool) func() ([2]phase, error) {
	var (
		stop    = make(chan struct{})
		wg      sync.WaitGroup
		mu      sync.Mutex
		phases  [2]phase
		loopErr error
	)
	for i := range cfg.Claimers {
		wg.Go(func() {
			var mine [2][]time.Duration
			err := claimLoop(ctx, b, fmt.Sprintf("claimer-%d", i), stop, cleaning, &mine)
			mu.Lock()
			defer mu.Unlock()
			for p := range phases {
				phases[p].claims = append(phases[p].claims, mine[p]...)
				phases[p].completed += len(mine[p])
			}
			loopErr = errors.Join(loopErr, err)
		})
	}
	return func() ([2]phase, error) {
		close(stop)
		wg.Wait()
		return phases, loopErr
	}
}

// timedStore is the claim store with each Claim call timed into the
// phase the cleaner is in.
type timedStore struct {
	*postgres.ClaimStore
	cleaning *atomic.Bool
	mu       *sync.Mutex
	phases   *[2]phase
}

// Close leaves the store open: it belongs to the cleaner's broker.
func (timedStore) Close() error { return nil }

func (s timedStore) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	p := 0
	if s.cleaning.Load() {
		p = 1
	}
	t0 := time.Now()
	cs, err := s.ClaimStore.Claim(ctx, req)
	d := time.Since(t0)
	s.mu.Lock()
	s.phases[p].claims = append(s.phases[p].claims, d)
	s.mu.Unlock()
	return cs, err
}

// steadyTick is how often the steady load enqueues its batch.
const steadyTick = 10 * time.Millisecond

// startSteady starts the steady load of cfg.Rate items a second on store
// (a queue of its own, worked by Broker.Work with cfg.RateWorkers
// handlers) and returns the function that stops it and returns what it
// did in each phase. The load has a broker of its own, whose store times
// the claims and leaves the store open when the broker closes. flowing
// is closed once the load's first item runs.
func startSteady(ctx context.Context, cfg CleanConfig, store *postgres.ClaimStore, cleaning *atomic.Bool) (halt func() ([2]phase, error), flowing <-chan struct{}) {
	var (
		mu     sync.Mutex
		phases [2]phase
		wg     sync.WaitGroup
		errs   [2]error
		first  sync.Once
		ran    = make(chan struct{})
	)
	queue := ourQueue + "_steady"
	b := lease.Must(claim.New(timedStore{ClaimStore: store, cleaning: cleaning, mu: &mu, phases: &phases}))
	ctx, cancel := context.WithCancel(ctx)
	w := claim.Worker{
		Queue:         queue,
		Concurrency:   cfg.RateWorkers,
		BatchSize:     min(cfg.RateWorkers, ourBatch),
		LeaseDuration: ourLease,
		Handler: func(context.Context, claim.Claim) error {
			p := 0
			if cleaning.Load() {
				p = 1
			}
			mu.Lock()
			phases[p].completed++
			mu.Unlock()
			first.Do(func() { close(ran) })
			return nil
		},
	}
	wg.Go(func() { errs[0] = b.Work(ctx, w) })
	wg.Go(func() {
		per := max(cfg.Rate*int(steadyTick)/int(time.Second), 1)
		items := make([]claim.NewItem, per)
		for i := range items {
			items[i] = claim.NewItem{Queue: queue}
		}
		tick := time.NewTicker(steadyTick)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if _, err := b.EnqueueMany(ctx, items); err != nil {
				if ctx.Err() == nil {
					errs[1] = fmt.Errorf("steady enqueue: %w", err)
				}
				return
			}
		}
	})
	return func() ([2]phase, error) {
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return phases, errors.Join(errs[0], errs[1], b.Close())
	}, ran
}

// claimLoop enqueues an item, claims it and completes it, until stop is
// closed, and records each Claim call's duration in lat[0] before the
// cleaner starts and in lat[1] once it has.
func claimLoop(ctx context.Context, b *claim.Broker, owner string, stop <-chan struct{}, cleaning *atomic.Bool, lat *[2][]time.Duration) error {
	queue := ourQueue + "_" + owner // one queue per claimer: each claim finds its own item
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		if _, err := b.Enqueue(ctx, queue, nil); err != nil {
			return fmt.Errorf("enqueue: %w", err)
		}
		phase := 0
		if cleaning.Load() {
			phase = 1
		}
		t0 := time.Now()
		cs, err := b.Claim(ctx, queue, owner, 1, ourLease)
		d := time.Since(t0)
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		if len(cs) != 1 {
			return fmt.Errorf("claim: got %d items, want 1", len(cs))
		}
		lat[phase] = append(lat[phase], d)
		if err := b.Complete(ctx, cs[0]); err != nil {
			return fmt.Errorf("complete: %w", err)
		}
	}
}

// medianCleanRun is the field-wise median of runs.
func medianCleanRun(runs []CleanRun) CleanRun {
	dur := func(f func(CleanRun) time.Duration) time.Duration {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = float64(f(r))
		}
		return time.Duration(median(xs))
	}
	count := func(f func(CleanRun) int) int {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = float64(f(r))
		}
		return int(median(xs))
	}
	rate := func(f func(CleanRun) float64) float64 {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = f(r)
		}
		return median(xs)
	}
	lat := func(f func(CleanRun) Latencies) Latencies {
		return Latencies{
			Count:    count(func(r CleanRun) int { return f(r).Count }),
			P50:      dur(func(r CleanRun) time.Duration { return f(r).P50 }),
			P99:      dur(func(r CleanRun) time.Duration { return f(r).P99 }),
			Max:      dur(func(r CleanRun) time.Duration { return f(r).Max }),
			Over10ms: count(func(r CleanRun) int { return f(r).Over10ms }),
		}
	}
	return CleanRun{
		Clean:  dur(func(r CleanRun) time.Duration { return r.Clean }),
		Before: lat(func(r CleanRun) Latencies { return r.Before }),
		During: lat(func(r CleanRun) Latencies { return r.During }),

		RateBefore: rate(func(r CleanRun) float64 { return r.RateBefore }),
		RateDuring: rate(func(r CleanRun) float64 { return r.RateDuring }),
	}
}

// WriteMarkdown writes the settings line and a table of the medians.
func (r *CleanReport) WriteMarkdown(w io.Writer) error {
	if err := r.writeTable(w); err != nil {
		return err
	}
	for i, run := range r.Runs {
		if _, err := fmt.Fprintf(w, "\nRun %d, claim statements seen waiting while it cleaned: %v\n", i+1, run.Waits); err != nil {
			return err
		}
	}
	return nil
}

// writeTable writes the settings line and the table of medians.
func (r *CleanReport) writeTable(w io.Writer) error {
	c := r.Config
	m := r.Median
	load := fmt.Sprintf("%d goroutines enqueue, claim and complete one item at a time", c.Claimers)
	if c.Rate > 0 {
		load = fmt.Sprintf("a steady %d items/s are enqueued (a batch every %s) and worked off by Broker.Work with %d handlers (claim times are its Claim calls')", c.Rate, steadyTick, c.RateWorkers)
	}
	_, err := fmt.Fprintf(w, "Retention cleaner: %d completed rows past their retention removed by Clean(%d) in a loop (pause between calls: %s) while %s, on a pool of %d; "+
		"baseline %s before it starts; medians of %d runs; load average %s at the start, %s at the end.\n\n"+
		"| phase | completions/s | claims | claim p50 ms | claim p99 ms | claim max ms | claims over 10 ms |\n|---|--:|--:|--:|--:|--:|--:|\n"+
		"| before the cleaner | %.0f | %d | %s | %s | %s | %d |\n| while it cleans (%.1f s, %.0f rows/s) | %.0f | %d | %s | %s | %s | %d |\n",
		c.Rows, c.Batch, pauseText(c.Pause), load, cleanPoolSize(c), c.Before, c.Runs, r.Load[0], r.Load[1],
		m.RateBefore, m.Before.Count, ms(m.Before.P50), ms(m.Before.P99), ms(m.Before.Max), m.Before.Over10ms,
		m.Clean.Seconds(), float64(c.Rows)/m.Clean.Seconds(),
		m.RateDuring, m.During.Count, ms(m.During.P50), ms(m.During.P99), ms(m.During.Max), m.During.Over10ms)
	return err
}

// sampleClaimWaits polls pg_stat_activity every millisecond until ctx
// ends and counts the wait events of the claim statements it sees
// running, on a connection of its own from pool.
func sampleClaimWaits(ctx context.Context, pool *pgxpool.Pool) map[string]int {
	waits := map[string]int{}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		rows, err := pool.Query(ctx, `SELECT coalesce(wait_event_type || ':' || wait_event, 'running') FROM pg_stat_activity
WHERE datname = current_database() AND state = 'active' AND query LIKE 'WITH waiting AS%'`)
		if err == nil {
			var w string
			_, err = pgx.ForEachRow(rows, []any{&w}, func() error { waits[w]++; return nil })
		}
		if err != nil && ctx.Err() == nil {
			waits["sampling error: "+err.Error()]++
		}
		select {
		case <-ctx.Done():
			return waits
		case <-tick.C:
		}
	}
}

// cleanPoolSize is the pool of a cleaner run: a connection for each
// claimer, the cleaner, the sampler, and the store's own enqueue and
// settle statements, so that no claim waits for a connection.
func cleanPoolSize(cfg CleanConfig) int { return cfg.Claimers + 4 }

// pauseText describes CleanConfig.Pause.
func pauseText(d time.Duration) string {
	switch {
	case d == 0:
		return "as long as the previous call took"
	case d < 0:
		return "none"
	}
	return d.String()
}
