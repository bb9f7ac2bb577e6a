package claim

import (
	"context"
	"github.com/leasehold/lease/claim/claimstore"
	"strconv"
	"time"
)

// DefaultCleanBatch is the batch of Clean that RunCleaner uses unless
// told otherwise.
const DefaultCleanBatch = 1000

// DefaultCleanInterval is how long RunCleaner waits between rounds unless
// told otherwise.
const DefaultCleanInterval = 30 * time.Second

// CleanerConfig configures RunCleaner. It is a plain value, safe to copy
// and share.
type CleanerConfig struct {
	// Interval is the wait between rounds; 0 means DefaultCleanInterval.
	Interval time.Duration
	// Batch bounds the items one Clean call removes; 0 means
	// DefaultCleanBatch.
	Batch int
	// Pause is the wait between two Clean calls of one round, so that a
	// large backlog is removed at a bounded rate rather than in one
	// stretch that competes with claims for the store. 0 waits as long as
	// the previous call took (the cleaner works at most half the time, and
	// backs off on its own when the store slows down).
	Pause time.Duration
}

// isClosed reports whether done is closed.
func isClosed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// Clean removes up to limit finished items whose retention has passed (see
// claimstore.Cleaner) and returns how many. A store that is not a claimstore.Cleaner gets an
// error matching lease.ErrInvalidArgument naming "store".
func (b *Broker) Clean(ctx context.Context, limit int) (int, error) {
	const op = "clean"
	if err := checkContext(ctx, op); err != nil {
		return 0, err
	}
	c, ok := b.store.(claimstore.Cleaner)
	if !ok {
		return 0, invalid(op, "store", "does not keep finished items (not a claimstore.Cleaner)")
	}
	return c.Clean(ctx, limit)
}

// RunCleaner cleans the store until ctx ends or the Broker closes: each
// round calls Clean with cfg.Batch until a call removes fewer, pausing
// cfg.Pause between calls, then waits cfg.Interval, both on the Broker's
// clock. Run it in one goroutine per process
// (or in several processes: the store lets one clean at a time). It
// returns nil when ctx ends or the Broker closes, the first error of Clean
// other than those, and an error matching lease.ErrInvalidArgument for a
// negative Interval, Batch or Pause or a store that is not a claimstore.Cleaner.
func (b *Broker) RunCleaner(ctx context.Context, cfg CleanerConfig) error {
	const op = "run_cleaner"
	if ctx == nil {
		return invalid(op, "ctx", "must not be nil")
	}
	switch {
	case cfg.Interval < 0:
		return invalid(op, "interval", cfg.Interval.String()+" is negative")
	case cfg.Batch < 0:
		return invalid(op, "batch", strconv.Itoa(cfg.Batch)+" is negative")
	case cfg.Pause < 0:
		return invalid(op, "pause", cfg.Pause.String()+" is negative")
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultCleanInterval
	}
	if cfg.Batch == 0 {
		cfg.Batch = DefaultCleanBatch
	}
	c, ok := b.store.(claimstore.Cleaner)
	if !ok {
		return invalid(op, "store", "does not keep finished items (not a claimstore.Cleaner)")
	}
	for {
		for {
			start := b.clock.Now()
			n, err := c.Clean(ctx, cfg.Batch)
			if err != nil {
				if ctx.Err() != nil || isClosed(b.done) {
					return nil
				}
				return err
			}
			if n < cfg.Batch {
				break
			}
			pause := cfg.Pause
			if pause == 0 {
				pause = b.clock.Now().Sub(start)
			}
			if !b.sleep(ctx, pause) {
				return nil
			}
		}
		if !b.sleep(ctx, cfg.Interval) {
			return nil
		}
	}
}

// sleep waits d on the Broker's clock and reports whether it may go on:
// false once ctx ends or the Broker closes. It returns at once for d <= 0.
func (b *Broker) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil && !isClosed(b.done)
	}
	tick := make(chan struct{})
	t := b.clock.AfterFunc(d, func() { close(tick) })
	select {
	case <-ctx.Done():
		t.Stop()
		return false
	case <-b.done:
		t.Stop()
		return false
	case <-tick:
		return true
	}
}
