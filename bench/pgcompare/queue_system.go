package pgcompare

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// System is one work queue under test, opened on a fresh, empty database
// of its own. Items are no-ops: the harness measures the queue, not the
// work. An implementation adapts one library; the harness drives every
// implementation the same way (see Measure).
//
// The harness calls Enqueue from one goroutine at a time, Start once, then
// Settled and Stop, in that order; it may call Enqueue and Settled again
// after Start.
// The Observer's functions are called by the System from any goroutines,
// concurrently.
type System interface {
	// Enqueue adds n items to the queue in one bulk call, and returns once
	// they are committed.
	Enqueue(ctx context.Context, n int) error

	// Start starts the workers and returns without waiting for the queue
	// to drain. The handler of each item calls obs.Started as it begins,
	// and the System calls obs.Completed once for each item whose
	// completion it has stored, or is about to (see Settled).
	Start(ctx context.Context, obs Observer) error

	// Settled returns once every completion reported through
	// obs.Completed is durable in the database. A System that reports a
	// completion only after storing it returns nil at once.
	Settled(ctx context.Context) error

	// Stop stops the workers, waits for them, and releases what the System
	// holds. It does not close the pool it was opened with.
	Stop(ctx context.Context) error
}

// Observer is what a System reports to the harness. Both functions are
// safe for concurrent use; a System must not call them after Stop returns.
type Observer struct {
	// Started is called as a handler begins an item, with the item's ID
	// in its library (unique within the System's database), so that the
	// harness can check that every item ran exactly once.
	Started   func(id uint64)
	Completed func() // an item's completion was stored (see System.Settled)
}

// Setting is one configuration of one library to measure: a row of the
// report. Its fields are read-only once Measure is called.
type Setting struct {
	// Name labels the row, e.g. "River tuned (100 workers)".
	Name string
	// PoolSize is the MaxConns of the pgx pool the harness opens for it.
	PoolSize int
	// Open migrates the fresh database pool points to and returns the
	// System on it. The harness closes pool after System.Stop.
	Open func(ctx context.Context, pool *pgxpool.Pool) (System, error)
	// Pickup, if above 0, is the number of pickups each run of this
	// setting measures instead of Config.Pickup: River reports a
	// completion only once its completer has stored it, a few hundred
	// milliseconds after the handler returned, and the harness waits for
	// it before the next pickup, so a thousand of River's take minutes.
	Pickup int
}

// DefaultPoolSize is the pool size of every setting here: the same for
// every library, and pgxpool's own default on this two-core machine.
const DefaultPoolSize = 4
