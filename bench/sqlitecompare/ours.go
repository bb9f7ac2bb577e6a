package sqlitecompare

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

// OursName is the column of this repository's store.
const OursName = "lease sqlite.ClaimStore"

const (
	ourQueue = "sqlitecompare"
	// ourLease is long enough that no claim expires during a run.
	ourLease = time.Minute
)

// ourSystem is sqlite.ClaimStore behind claim.Broker, worked by
// Broker.Work.
type ourSystem struct {
	store  *sqlite.ClaimStore
	broker *claim.Broker
	items  []claim.NewItem // reused by EnqueueBatch, which the harness calls from one goroutine at a time

	cancel context.CancelFunc
	wg     sync.WaitGroup
	err    error // Work's, read after wg.Wait
}

// toOurSync maps sync to the store's option.
func toOurSync(sync Sync) sqlite.Synchronous {
	if sync == SyncNormal {
		return sqlite.SyncNormal
	}
	return sqlite.SyncFull
}

// openOurs opens the store on path with its defaults but sync.
func openOurs(ctx context.Context, path string, sync Sync) (System, error) {
	store, err := sqlite.NewClaimStore(ctx, path, sqlite.WithSynchronous(toOurSync(sync)))
	if err != nil {
		return nil, err
	}
	return &ourSystem{store: store, broker: lease.Must(claim.New(store))}, nil
}

// EnqueueOne adds one item with Broker.Enqueue.
func (s *ourSystem) EnqueueOne(ctx context.Context) error {
	_, err := s.broker.Enqueue(ctx, ourQueue, nil)
	return err
}

// EnqueueBatch adds n items with one Broker.EnqueueMany.
func (s *ourSystem) EnqueueBatch(ctx context.Context, n int) error {
	for len(s.items) < n {
		s.items = append(s.items, claim.NewItem{Queue: ourQueue})
	}
	_, err := s.broker.EnqueueMany(ctx, s.items[:n])
	return err
}

// Start runs Work with workers handlers until Stop. A completion is
// reported as its handler returns; Work stores it right after, and Settled
// waits for that.
func (s *ourSystem) Start(ctx context.Context, workers int, obs Observer) error {
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	w := claim.Worker{
		Queue:         ourQueue,
		Concurrency:   workers,
		LeaseDuration: ourLease,
		Handler: func(_ context.Context, c claim.Claim) error {
			obs.Started(uint64(c.Item))
			defer obs.Completed()
			return nil
		},
	}
	s.wg.Go(func() { s.err = s.broker.Work(ctx, w) })
	return nil
}

// Settled polls the store until no item of the queue is left unsettled.
func (s *ourSystem) Settled(ctx context.Context) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		c, err := s.store.Counts(ctx, ourQueue)
		if err != nil {
			return err
		}
		if c.Visible+c.Delayed+c.Claimed == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Transactions is the store's count of committed write transactions.
func (s *ourSystem) Transactions() int64 { return s.store.Transactions() }

// Stop ends Work, waits for it, and closes the broker, which closes the store.
func (s *ourSystem) Stop(context.Context) error {
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	if errors.Is(s.err, context.Canceled) {
		s.err = nil
	}
	return errors.Join(s.err, s.broker.Close()) // Close closes the store too
}
