package sqlitecompare

import (
	"context"
	"database/sql"
)

// System is one work queue under test, opened on one SQLite file. Items
// are no-ops: the harness measures the queue, not the work. An
// implementation adapts one library; the harness drives them all the same
// way.
//
// EnqueueOne may be called from many goroutines at once; EnqueueBatch
// from one at a time. Start is called at most once, then Settled and Stop,
// in that order; the enqueue methods may be called after Start. The
// Observer's functions are called by the System from any goroutines,
// concurrently.
type System interface {
	// EnqueueOne adds one item in one call of the library, and returns
	// once it is committed.
	EnqueueOne(ctx context.Context) error

	// EnqueueBatch adds n items in one call (or one transaction) of the
	// library, and returns once they are committed.
	EnqueueBatch(ctx context.Context, n int) error

	// Start starts workers handlers and returns without waiting for the
	// queue to drain. The handler of each item calls obs.Started as it
	// begins, and the System calls obs.Completed once for each item whose
	// completion it has stored, or is about to (see Settled).
	Start(ctx context.Context, workers int, obs Observer) error

	// Settled returns once every completion reported through
	// obs.Completed is durable in the file. A System that reports a
	// completion only after storing it returns nil at once.
	Settled(ctx context.Context) error

	// Stop stops the workers, waits for them, and closes the file.
	Stop(ctx context.Context) error
}

// Observer is what a System reports to the harness. Both functions are
// safe for concurrent use; a System must not call them after Stop returns.
type Observer struct {
	// Started is called as a handler begins an item, with the item's ID
	// (unique within the file), so that the harness can check that every
	// item ran exactly once.
	Started   func(id uint64)
	Completed func() // an item's completion was stored (see System.Settled)
}

// Queue is one library to measure: a column of the report. Its fields are
// read-only once Measure is called.
type Queue struct {
	// Name labels the column, e.g. "River".
	Name string
	// Open opens the library's queue on the SQLite file at path with the
	// synchronous setting sync, creating the file and its schema if they
	// do not exist (so a second process may open the same file).
	Open func(ctx context.Context, path string, sync Sync) (System, error)
	// FillHistory, if not nil, bulk-loads n finished items, kept as the
	// library keeps what it completed, into the file db is open on in one statement, whose
	// schema Open made; nil for a library that keeps nothing finished.
	FillHistory func(ctx context.Context, db *sql.DB, n int) error
	// Keeps says what the library keeps of the items it finished.
	Keeps string
}

// Queues are the libraries measured, in the report's order: this
// repository's SQLite claim store, River on its SQLite driver, goqite.
func Queues() []Queue {
	return []Queue{
		{Name: OursName, Open: openOurs, FillHistory: fillOurs,
			Keeps: "nothing by default; with a retention (sqlite.WithRetention) completed items for it, as Completed rows"},
		{Name: RiverName, Open: openRiver, FillHistory: fillRiver,
			Keeps: "completed jobs, 24 hours by default (its job cleaner's CompletedJobRetentionPeriod)"},
		{Name: GoqiteName, Open: openGoqite,
			Keeps: "nothing: jobs.Runner deletes a message once its job returns"},
	}
}

// queueByName returns the queue of Queues named name.
func queueByName(name string) (Queue, bool) {
	for _, q := range Queues() {
		if q.Name == name {
			return q, true
		}
	}
	return Queue{}, false
}
