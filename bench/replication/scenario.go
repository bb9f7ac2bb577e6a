package replication

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// measure is one figure of one run.
type measure struct {
	scenario string // the scenario as reported, e.g. "renew (KeepAliveOnce)"
	metric   string // what was measured, with its unit
	value    float64
}

// scenario is one of the measurements, run on a fresh cluster each time.
type scenario struct {
	key string // the name -scenarios takes
	run func(ctx context.Context, sys system, cfg Config) ([]measure, error)
}

// scenarios are every scenario, in the order they run and are reported.
var scenarios = []scenario{
	{"grant-revoke", grantRevoke},
	{"grant-put", grantPut},
	{"grant-with-key", grantWithKey},
	{"renew", renewRate},
	{"expiry-lag", expiryLag},
	{"due-together", dueTogether},
}

// longTTL is the TTL of leases that must outlive a run.
const longTTL = 60 * time.Second

var value = []byte("value")

// grantRevoke is scenario (a): each client grants a lease and revokes it,
// over and over.
func grantRevoke(ctx context.Context, sys system, cfg Config) ([]measure, error) {
	rate, err := throughput(ctx, cfg.Clients, cfg.Duration, func(context.Context, int) (func(context.Context) error, func(), error) {
		op := func(ctx context.Context) error {
			g, err := sys.grant(ctx, longTTL)
			if err != nil {
				return fmt.Errorf("grant: %w", err)
			}
			if err := sys.revoke(ctx, g.id); err != nil {
				return fmt.Errorf("revoke: %w", err)
			}
			return nil
		}
		return op, func() {}, nil
	})
	return []measure{{"grant+revoke", "pairs/s", rate}}, err
}

// grantPut is scenario (b): each client grants a lease and then puts one
// key of its own to it, two calls, over and over: the same calls on both
// systems.
func grantPut(ctx context.Context, sys system, cfg Config) ([]measure, error) {
	rate, err := throughput(ctx, cfg.Clients, cfg.Duration, func(_ context.Context, client int) (func(context.Context) error, func(), error) {
		prefix := "bench/put/" + strconv.Itoa(client) + "/"
		n := 0
		op := func(ctx context.Context) error {
			n++
			g, err := sys.grant(ctx, longTTL)
			if err != nil {
				return fmt.Errorf("grant: %w", err)
			}
			if err := sys.put(ctx, prefix+strconv.Itoa(n), value, g.id); err != nil {
				return fmt.Errorf("put: %w", err)
			}
			return nil
		}
		return op, func() {}, nil
	})
	return []measure{{"grant then put (two calls)", "pairs/s", rate}}, err
}

// grantWithKey is scenario (b'): each client grants a lease with one key of
// its own in the fewest calls its system has, over and over: ours in one
// (GrantWithKey, one log entry), etcd in two (Grant, then Put with the
// lease: it has no call that does both).
func grantWithKey(ctx context.Context, sys system, cfg Config) ([]measure, error) {
	rate, err := throughput(ctx, cfg.Clients, cfg.Duration, func(_ context.Context, client int) (func(context.Context) error, func(), error) {
		prefix := "bench/key/" + strconv.Itoa(client) + "/"
		n := 0
		op := func(ctx context.Context) error {
			n++
			if _, err := sys.grantKey(ctx, longTTL, prefix+strconv.Itoa(n), value); err != nil {
				return fmt.Errorf("grant with key: %w", err)
			}
			return nil
		}
		return op, func() {}, nil
	})
	return []measure{{"grant with key (ours: GrantWithKey; etcd: Grant, Put)", "grants/s", rate}}, err
}

// renewRate is scenario (c): each client renews a lease of its own, over
// and over, once for each way the system renews.
func renewRate(ctx context.Context, sys system, cfg Config) ([]measure, error) {
	var out []measure
	for _, r := range sys.renewers() {
		rate, err := throughput(ctx, cfg.Clients, cfg.Duration, func(ctx context.Context, _ int) (func(context.Context) error, func(), error) {
			g, err := sys.grant(ctx, longTTL)
			if err != nil {
				return nil, nil, fmt.Errorf("grant: %w", err)
			}
			renew, done, err := r.open(ctx, g.id)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", r.name, err)
			}
			op := func(ctx context.Context) error {
				if _, err := renew(ctx); err != nil {
					return fmt.Errorf("%s: %w", r.name, err)
				}
				return nil
			}
			return op, done, nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, measure{"renew (" + r.name + ")", "renewals/s", rate})
	}
	return out, nil
}

// throughput runs one op per client in a loop for d and returns the
// operations completed per second. setup prepares client i's op and what
// releases it; the clock starts once every client is ready.
func throughput(ctx context.Context, clients int, d time.Duration, setup func(ctx context.Context, i int) (op func(context.Context) error, done func(), err error)) (float64, error) {
	ops := make([]func(context.Context) error, 0, clients)
	var dones []func()
	defer func() {
		for _, done := range dones {
			done()
		}
	}()
	for i := range clients {
		op, done, err := setup(ctx, i)
		if err != nil {
			return 0, err
		}
		ops = append(ops, op)
		dones = append(dones, done)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var total atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for _, op := range ops {
		wg.Go(func() {
			var n int64
			for time.Now().Before(end) {
				if err := op(ctx); err != nil {
					cancel(err)
					break
				}
				n++
			}
			total.Add(n)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return 0, err
	}
	return float64(total.Load()) / elapsed.Seconds(), nil
}

// endLog records when each lease was seen to end.
type endLog struct {
	mu    sync.Mutex
	ended map[int64]time.Time
}

func newEndLog() *endLog { return &endLog{ended: make(map[int64]time.Time)} }

func (e *endLog) record(id int64, at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.ended[id]; !ok {
		e.ended[id] = at
	}
}

// waitAll waits until every one of grants has ended, or ctx ends, and
// returns when each ended, in the order of grants.
func (e *endLog) waitAll(ctx context.Context, grants []grant) ([]time.Time, error) {
	return waitFor(ctx, "every lease to end", func() ([]time.Time, bool) {
		e.mu.Lock()
		defer e.mu.Unlock()
		ends := make([]time.Time, len(grants))
		for i, g := range grants {
			at, ok := e.ended[g.id]
			if !ok {
				return nil, false
			}
			ends[i] = at
		}
		return ends, true
	})
}

// renewLoad keeps clients renewing leases of their own until the returned
// stop is called; stop reports the first error.
func renewLoad(ctx context.Context, sys system, clients int) (stop func() error, err error) {
	r := sys.renewers()[0]
	ctx, cancel := context.WithCancelCause(ctx)
	var renews []func(context.Context) (time.Time, error)
	var dones []func()
	release := func() {
		for _, done := range dones {
			done()
		}
	}
	for range clients {
		g, err := sys.grant(ctx, longTTL)
		if err == nil {
			var renew func(context.Context) (time.Time, error)
			var done func()
			renew, done, err = r.open(ctx, g.id)
			if err == nil {
				renews, dones = append(renews, renew), append(dones, done)
			}
		}
		if err != nil {
			cancel(nil)
			release()
			return nil, fmt.Errorf("renew load: %w", err)
		}
	}
	stopped := errors.New("stopped")
	var wg sync.WaitGroup
	for _, renew := range renews {
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, err := renew(ctx); err != nil && ctx.Err() == nil {
					cancel(fmt.Errorf("renew load: %w", err))
				}
			}
		})
	}
	return func() error {
		cancel(stopped)
		wg.Wait()
		release()
		if err := context.Cause(ctx); !errors.Is(err, stopped) {
			return err
		}
		return nil
	}, nil
}

// expiryLag is scenario (d): cfg.ExpiryLeases leases with TTLs spread over
// 1 to 3 s, granted over 2 s, expire while cfg.Clients clients renew other
// leases; the lag of each is when its end was observed minus its deadline.
// With cfg.Dir set, a probe measures the disk's syncs in it meanwhile.
func expiryLag(ctx context.Context, sys system, cfg Config) ([]measure, error) {
	const prefix = "bench/expiry/"
	const spread = 2 * time.Second
	n := cfg.ExpiryLeases
	log := newEndLog()
	stopWatch, err := sys.watchEnds(ctx, prefix, log.record)
	if err != nil {
		return nil, err
	}
	defer stopWatch()
	var probe *fsyncProbe
	if cfg.Dir != "" {
		if probe, err = startFsyncProbe(cfg.Dir); err != nil {
			return nil, err
		}
	}
	finishProbe := func() (ms []measure, err error) {
		if probe == nil {
			return nil, nil
		}
		p50, p99, err := probe.finish()
		return []measure{
			{"expiry lag", "disk fsync p50 ms", p50},
			{"expiry lag", "disk fsync p99 ms", p99},
		}, err
	}
	stopLoad, err := renewLoad(ctx, sys, cfg.Clients)
	if err != nil {
		_, perr := finishProbe()
		return nil, errors.Join(err, perr)
	}
	grants, err := spreadGrants(ctx, sys, n, spread, prefix)
	if err != nil {
		_, perr := finishProbe()
		return nil, errors.Join(err, stopLoad(), perr)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Until(latest(grants))+time.Minute)
	ends, err := log.waitAll(wctx, grants)
	cancel()
	disk, perr := finishProbe()
	if err := errors.Join(err, stopLoad(), perr); err != nil {
		return nil, err
	}
	lags := make([]float64, n)
	for i, g := range grants {
		lags[i] = ms(ends[i].Sub(g.deadline))
	}
	slices.Sort(lags)
	return append([]measure{
		{"expiry lag", "p50 ms", percentile(lags, 0.50)},
		{"expiry lag", "p99 ms", percentile(lags, 0.99)},
	}, disk...), nil
}

// spreadGrants grants n leases with keys under prefix, the i-th at i/n of
// spread from now, with TTLs from 1 to 3 s in a scattered order.
func spreadGrants(ctx context.Context, sys system, n int, spread time.Duration, prefix string) ([]grant, error) {
	const granters = 8
	grants := make([]grant, n)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	start := time.Now()
	var wg sync.WaitGroup
	for g := range granters {
		wg.Go(func() {
			for i := g; i < n; i += granters {
				at := start.Add(spread * time.Duration(i) / time.Duration(n))
				t := time.NewTimer(time.Until(at))
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return
				}
				ttl := time.Second + 2*time.Second*time.Duration(i*7919%n)/time.Duration(n)
				gr, err := sys.grantKey(ctx, ttl, prefix+strconv.Itoa(i), value)
				if err != nil {
					cancel(fmt.Errorf("grant with key: %w", err))
					return
				}
				grants[i] = gr
			}
		})
	}
	wg.Wait()
	return grants, context.Cause(ctx)
}

// dueTogether is scenario (e): cfg.DueLeases leases with keys fall due
// together, and the drain is the time from the last deadline until the last
// lease was seen to end. Where TTLs are exact, each lease is granted with
// the TTL that leaves it due cfg.DueTTL after the first grant; otherwise
// (etcd) they are granted with TTL cfg.DueTTL and then all renewed as fast
// as the clients can, which brings their deadlines as close as the API
// allows. The spread of the deadlines is reported too.
func dueTogether(ctx context.Context, sys system, cfg Config) ([]measure, error) {
	const prefix = "bench/due/"
	n := cfg.DueLeases
	log := newEndLog()
	stopWatch, err := sys.watchEnds(ctx, prefix, log.record)
	if err != nil {
		return nil, err
	}
	defer stopWatch()
	grants := make([]grant, n)
	start := time.Now()
	due := start.Add(cfg.DueTTL)
	err = parallel(ctx, cfg.Clients, n, func(ctx context.Context, i int) error {
		ttl := cfg.DueTTL
		if sys.exactTTL() {
			ttl = time.Until(due)
		}
		g, err := sys.grantKey(ctx, ttl, prefix+strconv.Itoa(i), value)
		grants[i] = g
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("grant with key: %w", err)
	}
	if took := time.Since(start); took > cfg.DueTTL*2/3 {
		return nil, fmt.Errorf("granting %d leases took %v, too long for their TTL of %v", n, took, cfg.DueTTL)
	}
	if !sys.exactTTL() {
		r := sys.renewers()[0]
		err = parallel(ctx, cfg.Clients, n, func(ctx context.Context, i int) error {
			renew, done, err := r.open(ctx, grants[i].id)
			if err != nil {
				return err
			}
			defer done()
			grants[i].deadline, err = renew(ctx)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
	}
	last := latest(grants)
	wctx, cancel := context.WithTimeout(ctx, time.Until(last)+2*time.Minute)
	defer cancel()
	ends, err := log.waitAll(wctx, grants)
	if err != nil {
		return nil, err
	}
	lastEnd := slices.MaxFunc(ends, time.Time.Compare)
	first := slices.MinFunc(grants, func(a, b grant) int { return a.deadline.Compare(b.deadline) })
	return []measure{
		{"due together", "drain ms", ms(lastEnd.Sub(last))},
		{"due together", "deadline spread ms", ms(last.Sub(first.deadline))},
	}, nil
}

// parallel calls fn for 0 to n-1 from clients goroutines and returns the
// first error.
func parallel(ctx context.Context, clients, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// latest returns the last of the grants' deadlines.
func latest(grants []grant) time.Time {
	return slices.MaxFunc(grants, func(a, b grant) int { return a.deadline.Compare(b.deadline) }).deadline
}

// percentile returns the q-quantile of sorted, by nearest rank.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(q*float64(len(sorted)-1)+0.5)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
