package hacompare

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease/bench/pgcompare"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/replicated"
)

// SystemConfig is one configuration of the replicated queue: a row of
// the report. It is a plain value.
type SystemConfig struct {
	Cluster ClusterConfig
	// Workers is the number of handlers, all on the leader or, with
	// Spread, split as evenly as they go over the three nodes (a store on
	// a follower forwards its calls to the leader). Default 100.
	Workers int
	Spread  bool
	// Retention keeps completed items for claim.StandardRetention (24
	// hours) instead of deleting them as they complete.
	Retention bool
	// Lease is the workers' claim lease (claim.Worker.LeaseDuration).
	// Default 1 minute: no claim expires during a run.
	Lease time.Duration
}

func (c SystemConfig) withDefaults() SystemConfig {
	if c.Workers <= 0 {
		c.Workers = 100
	}
	if c.Lease <= 0 {
		c.Lease = time.Minute
	}
	return c
}

// Name labels the configuration in a report.
func (c SystemConfig) Name() string {
	where := "on the leader"
	if c.Spread {
		where = "spread over 3 nodes"
	}
	sec := "plain TCP"
	if c.Cluster.TLS {
		sec = "mutual TLS"
	}
	ret := ""
	if c.Retention {
		ret = ", retention"
	}
	return fmt.Sprintf("lease replicated (%d workers %s, %s%s)", c.Workers, where, sec, ret)
}

const (
	haQueue = "hacompare"
	// haBatch bounds the items one claim of Work takes, as in pgcompare.
	haBatch = 1000
)

// haSystem is a three-node cluster with a replicated.ClaimStore behind a
// claim.Broker on each node. It is a pgcompare.System, so that
// pgcompare.Measure drives it exactly as it drives River.
type haSystem struct {
	cfg     SystemConfig
	c       *cluster
	leader  int
	brokers []*claim.Broker
	stores  []*replicated.ClaimStore
	items   []claim.NewItem // reused by Enqueue, which the harness calls from one goroutine at a time
	// onStart, if set before Start, is called as each handler begins, with
	// the node it runs on.
	onStart func(node int, id uint64)

	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error // the Work calls', read after wg.Wait
}

var _ pgcompare.System = (*haSystem)(nil)

// Setting is cfg as a setting of pgcompare.Measure; the PostgreSQL
// database Measure makes for it goes unused.
func Setting(cfg SystemConfig) pgcompare.Setting {
	return pgcompare.Setting{
		Name:     cfg.Name(),
		PoolSize: 1,
		Open: func(ctx context.Context, _ *pgxpool.Pool) (pgcompare.System, error) {
			return openSystem(ctx, cfg)
		},
	}
}

// openSystem starts a cluster and a store and broker on each node.
func openSystem(ctx context.Context, cfg SystemConfig) (s *haSystem, err error) {
	cfg = cfg.withDefaults()
	c, err := startCluster(ctx, cfg.Cluster)
	if err != nil {
		return nil, err
	}
	s = &haSystem{cfg: cfg, c: c}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Stop(context.WithoutCancel(ctx)))
		}
	}()
	if s.leader, err = c.leader(ctx, -1); err != nil {
		return s, err
	}
	for _, n := range c.running() {
		store, err := replicated.NewClaimStore(n)
		if err != nil {
			return s, err
		}
		b, err := claim.New(store)
		if err != nil {
			return s, errors.Join(err, store.Close())
		}
		s.stores = append(s.stores, store)
		s.brokers = append(s.brokers, b)
	}
	if cfg.Retention {
		if err := s.stores[s.leader].SetRetention(ctx, claim.StandardRetention); err != nil {
			return s, fmt.Errorf("retention: %w", err)
		}
	}
	return s, nil
}

// Enqueue adds n items with one EnqueueMany on the leader.
func (s *haSystem) Enqueue(ctx context.Context, n int) error {
	for len(s.items) < n {
		s.items = append(s.items, claim.NewItem{Queue: haQueue, MaxAttempts: claim.DefaultMaxAttempts})
	}
	_, err := s.brokers[s.leader].EnqueueMany(ctx, s.items[:n])
	return err
}

// workersOn returns how many of the workers run on node i.
func (s *haSystem) workersOn(i int) int {
	if !s.cfg.Spread {
		if i == s.leader {
			return s.cfg.Workers
		}
		return 0
	}
	n := s.cfg.Workers / clusterSize
	if i < s.cfg.Workers%clusterSize {
		n++
	}
	return n
}

// Start runs Work on the nodes that have workers until Stop. A completion
// is reported as its handler returns; Work stores it right after, and
// Settled waits for that.
func (s *haSystem) Start(ctx context.Context, obs pgcompare.Observer) error {
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for i, b := range s.brokers {
		workers := s.workersOn(i)
		if workers == 0 {
			continue
		}
		w := claim.Worker{
			Queue:         haQueue,
			Concurrency:   workers,
			BatchSize:     min(workers, haBatch),
			LeaseDuration: s.cfg.Lease,
			Handler: func(_ context.Context, c claim.Claim) error {
				if s.onStart != nil {
					s.onStart(i, uint64(c.Item))
				}
				obs.Started(uint64(c.Item))
				defer obs.Completed()
				return nil
			},
		}
		s.wg.Go(func() {
			if err := b.Work(ctx, w); err != nil {
				s.mu.Lock()
				s.errs = append(s.errs, fmt.Errorf("node%d: %w", i, err))
				s.mu.Unlock()
			}
		})
	}
	return nil
}

// settled polls the store of node i until no item of the queue is left
// unsettled, and returns its counts then.
func (s *haSystem) settled(ctx context.Context, i int) (claim.Counts, error) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		c, err := s.stores[i].Counts(ctx, haQueue)
		if err != nil {
			return c, err
		}
		if c.Visible+c.Delayed+c.Claimed == 0 {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-tick.C:
		}
	}
}

// Settled polls the leader's store until no item is left unsettled.
func (s *haSystem) Settled(ctx context.Context) error {
	_, err := s.settled(ctx, s.leader)
	return err
}

// Stop ends the Work calls, waits for them, closes the brokers (which
// close their stores) and the cluster.
func (s *haSystem) Stop(context.Context) error {
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	errs := s.errs
	for _, b := range s.brokers {
		if b != nil {
			errs = append(errs, b.Close())
		}
	}
	return errors.Join(append(errs, s.c.close())...)
}
