package sqlite

// PendingWrites returns how many writes wait for the store's next batch.
func PendingWrites(s *ClaimStore) int { return s.d.commit.b.Pending() }

// The statements of Counts and Queues, and of a claim of one item, for
// their query plans.
var SQLCounts, SQLQueues, SQLTakeNext = sqlCounts, sqlQueues, sqlTakeNext

// Batches returns how many batches the store's committer ran, and how
// many of them ran on their callers' goroutines.
func Batches(s *ClaimStore) (all, byCaller int64) {
	return s.d.commit.b.Batches(), s.d.commit.b.CallerBatches()
}

// ForeignWrites returns how many writes to the file the store's watcher
// took for another process's.
func ForeignWrites(s *ClaimStore) int64 { return s.d.watch.foreignWrites.Load() }

// FileReads returns how many times the store's watch of the file read
// the writes it was told of.
func FileReads(s *ClaimStore) int64 { return s.d.watch.fileReads.Load() }

// WithFileReadHook makes f run after each read of the watch of the
// store's file.
func WithFileReadHook(f func()) Option { return optionFunc(func(c *config) { c.hooks.fileRead = f }) }

// WithVersionReadHook makes f run after each read of data_version by the
// store's watcher, once the waiters the read wakes are woken.
func WithVersionReadHook(f func()) Option {
	return optionFunc(func(c *config) { c.hooks.versionRead = f })
}

// WithLockBusyHook makes f run each time the store's committer finds the
// write lock held by another connection.
func WithLockBusyHook(f func()) Option { return optionFunc(func(c *config) { c.hooks.lockBusy = f }) }

// LockRetryAfter is how long the committer waits before its n-th attempt
// to take the write lock again.
var LockRetryAfter = lockRetryAfter

// WithBeforeSnapshotHook makes f run as each of the store's inspection
// reads is about to take its snapshot.
func WithBeforeSnapshotHook(f func()) Option {
	return optionFunc(func(c *config) { c.hooks.beforeSnapshot = f })
}
