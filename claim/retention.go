package claim

import (
	"context"
	"strconv"
	"time"
)

// Retention says how long a store keeps the items that finished, per state,
// counted from when each finished (FinishedAt, or DeadAt for a dead
// letter). A kept item stays visible to Lookup, List and Counts, and keeps
// its Key (an Enqueue with it returns the kept item) until a Clean removes
// it. It is a plain value, safe to copy and share.
//
// The zero Retention keeps no completed or cancelled item (they are removed
// when they finish) and keeps dead letters until DeleteDead: a store's
// behaviour unless told otherwise. StandardRetention is the retention of a
// queue that keeps its history for a while, as River's does by default.
type Retention struct {
	// Completed is how long a completed item is kept; 0 removes it when
	// it completes.
	Completed time.Duration
	// Cancelled is how long a cancelled item is kept; 0 removes it when
	// it is cancelled.
	Cancelled time.Duration
	// Dead is how long a dead letter is kept before a Clean may remove
	// it; 0 keeps dead letters until DeleteDead.
	Dead time.Duration
}

// StandardRetention keeps completed and cancelled items for a day and dead
// letters for a week: enough to look at what ran yesterday without the
// table growing with all history.
var StandardRetention = Retention{Completed: 24 * time.Hour, Cancelled: 24 * time.Hour, Dead: 7 * 24 * time.Hour}

// Check returns an error matching lease.ErrInvalidArgument naming the
// first negative field ("retention.completed", "retention.cancelled",
// "retention.dead"), or nil.
func (r Retention) Check() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"completed", r.Completed}, {"cancelled", r.Cancelled}, {"dead", r.Dead}} {
		if f.d < 0 {
			return invalid("retention", "retention."+f.name, f.d.String()+" is negative")
		}
	}
	return nil
}

// Cleaner is a Store that keeps finished items for a Retention and removes
// them once it has passed. Memory and the PostgreSQL store are Cleaners.
//
// Clean removes up to limit items whose retention has passed, on the
// store's clock, oldest first within each state, and returns how many it
// removed; fewer than limit means it found no more. It never removes an
// item before its retention has passed, nor an item in any other state.
// Calls may come from several processes at once: a store lets one clean at
// a time and returns 0 at once to the others (Memory under its lock, the
// PostgreSQL store under a transaction-scoped advisory lock), so no two
// cleaners fight over the same rows. limit below 1 is bad input.
type Cleaner interface {
	Store
	Clean(ctx context.Context, limit int) (int, error)
}

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
// Cleaner) and returns how many. A store that is not a Cleaner gets an
// error matching lease.ErrInvalidArgument naming "store".
func (b *Broker) Clean(ctx context.Context, limit int) (int, error) {
	const op = "clean"
	if err := checkLimit(ctx, op, limit); err != nil {
		return 0, err
	}
	c, ok := b.store.(Cleaner)
	if !ok {
		return 0, invalid(op, "store", "does not keep finished items (not a claim.Cleaner)")
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
// negative Interval, Batch or Pause or a store that is not a Cleaner.
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
	c, ok := b.store.(Cleaner)
	if !ok {
		return invalid(op, "store", "does not keep finished items (not a claim.Cleaner)")
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
