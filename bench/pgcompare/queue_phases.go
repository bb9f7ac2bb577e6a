package pgcompare

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TxEnqueuer is a System that can enqueue inside a transaction of the
// caller's, so that the items exist only if that transaction commits.
type TxEnqueuer interface {
	// EnqueueTx adds n items in tx, in one call of the library.
	EnqueueTx(ctx context.Context, tx pgx.Tx, n int) error
}

// relay forwards an Observer's calls to the Observer set last, so that
// the workers one Start launched serve a burn-down and then the pickups
// measured right after it.
type relay struct{ cur atomic.Pointer[Observer] }

// set routes the calls from now on to o.
func (r *relay) set(o Observer) { r.cur.Store(&o) }

// observer is what the System is started with.
func (r *relay) observer() Observer {
	return Observer{
		Started:   func(id uint64) { r.cur.Load().Started(id) },
		Completed: func() { r.cur.Load().Completed() },
	}
}

// txEnqueue times cfg.TxRounds caller transactions on pool, each one
// begin, one EnqueueTx of cfg.TxItems items and a commit, and returns the
// median; 0 if sys is not a TxEnqueuer. The workers are not started.
func txEnqueue(ctx context.Context, cfg Config, sys System, pool *pgxpool.Pool) (time.Duration, error) {
	te, ok := sys.(TxEnqueuer)
	if !ok {
		return 0, nil
	}
	times := make([]time.Duration, 0, cfg.TxRounds)
	for i := range cfg.TxRounds {
		tctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		t0 := time.Now()
		err := pgx.BeginFunc(tctx, pool, func(tx pgx.Tx) error { return te.EnqueueTx(tctx, tx, cfg.TxItems) })
		d := time.Since(t0)
		cancel()
		if err != nil {
			return 0, fmt.Errorf("tx enqueue %d: %w", i+1, err)
		}
		times = append(times, d)
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}
