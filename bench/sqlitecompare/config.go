package sqlitecompare

import (
	"io"
	"time"
)

// Config sizes a measurement. The zero value of a field means its default.
// A Config is read-only once Measure is called.
type Config struct {
	// Dir is where the measurement makes its temporary directory of
	// files: the disk measured. Default os.TempDir().
	Dir string
	// Sync is the synchronous setting of every queue. Default SyncFull.
	Sync Sync
	// Floor is how long the commit floor is measured each run. Default 2s.
	Floor time.Duration
	// BurnDown is how many items each burn-down works off, and Workers
	// the numbers of workers it is measured at. Defaults 10,000 and
	// 1, 10, 100.
	BurnDown int
	Workers  []int
	// Enqueue is how many items the batched enqueue adds, Batch items per
	// call. Defaults 100,000 and 1,000.
	Enqueue, Batch int
	// EnqueueOne is how many items are enqueued one per call by
	// Goroutines goroutines at once; a tenth as many are then enqueued one
	// per call by one goroutine. Defaults 10,000 and 100.
	EnqueueOne, Goroutines int
	// Pickup is how many items' pickup latency each run measures, in the
	// process and from another process, after PickupWarmup unmeasured
	// ones; PickupWorkers workers wait for them. Defaults 100, 5 and 10.
	Pickup, PickupWarmup, PickupWorkers int
	// Runs is how many times each queue is measured. Default 3.
	Runs int
	// History is how many finished items every file holds before a phase
	// starts, bulk-loaded once into each queue's template file (then
	// ANALYZE): completed rows for the queues that keep them (Queue.Keeps),
	// our store then opened with claim.StandardRetention. Default 0.
	History int
	// Retention opens our store with claim.StandardRetention even
	// without History, so that a measurement on empty files compares
	// with one on files with a history.
	Retention bool
	// Timeout bounds each phase of a run. Default 10 minutes.
	Timeout time.Duration
	// Queues are the names of the queues (of Queues) to measure; default
	// all of them.
	Queues []string
	// Progress, if not nil, gets a line for each finished phase.
	Progress io.Writer
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.BurnDown, 10_000)
	def(&c.Enqueue, 100_000)
	def(&c.Batch, 1_000)
	def(&c.EnqueueOne, 10_000)
	def(&c.Goroutines, 100)
	def(&c.Pickup, 100)
	def(&c.PickupWarmup, 5)
	def(&c.PickupWorkers, 10)
	def(&c.Runs, 3)
	if len(c.Workers) == 0 {
		c.Workers = []int{1, 10, 100}
	}
	if c.Sync == "" {
		c.Sync = SyncFull
	}
	if c.Floor <= 0 {
		c.Floor = 2 * time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Minute
	}
	if len(c.Queues) == 0 {
		for _, q := range Queues() {
			c.Queues = append(c.Queues, q.Name)
		}
	}
	return c
}
