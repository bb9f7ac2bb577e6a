package sqlite

import (
	"errors"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// Synchronous is how hard SQLite works to get a commit onto the disk before
// the commit returns, the PRAGMA synchronous of the file's connections. It
// is a plain value, safe to share.
type Synchronous uint8

// The durability settings.
const (
	// SyncFull (the default) syncs the write-ahead log on every commit: a
	// commit that returned survives a power loss or an operating system
	// crash.
	SyncFull Synchronous = iota + 1
	// SyncNormal syncs the write-ahead log only at checkpoints. A commit
	// survives the crash of the process (the operating system has the
	// write), but the last commits before a power loss or an operating
	// system crash may roll back: the file stays consistent, never
	// corrupt, and holds a prefix of the commits. It saves one fsync per
	// commit.
	SyncNormal
)

// String returns "FULL" or "NORMAL", as the PRAGMA spells them.
func (s Synchronous) String() string {
	switch s {
	case SyncFull:
		return "FULL"
	case SyncNormal:
		return "NORMAL"
	}
	return "Synchronous(" + strconv.Itoa(int(s)) + ")"
}

// Defaults of the options.
const (
	// DefaultPoll is how often a store reads whether another process
	// changed the file (PRAGMA data_version on a connection of its own)
	// while someone waits: the latency with which a waiter or an idle
	// worker in one process learns of a change made by another, where the
	// store is not told of writes to the file (on Linux it is, and the
	// poll only stands in for a write it missed). Changes made through the
	// same store wake its waiters at once.
	DefaultPoll = 5 * time.Millisecond
	// DefaultBusyTimeout is how long a connection waits for another
	// process's write transaction before the file is reported busy; the
	// store then tries again, so a busy file only delays a call. A write
	// waits by trying again for the write lock every half millisecond at
	// most (at first sooner), so that it goes on within a fraction of a
	// millisecond of the other process's commit; a read waits in SQLite's
	// busy handler.
	DefaultBusyTimeout = 5 * time.Second
	// DefaultBatch is the largest number of write calls one transaction
	// commits together.
	DefaultBatch = 512
	// DefaultReaders is how many connections serve reads (Lookup, List,
	// Counts, Holder, Held) besides the one writer connection.
	DefaultReaders = 4
)

// Option configures a store or provider of this package. Options are
// applied in order by the constructor, which validates the result.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	sync    Synchronous
	poll    time.Duration
	busy    time.Duration
	batch   int
	readers int
	clock   lease.Clock
	maxPage int64
	// maxPageSet: WithMaxPages was given, so maxPage must be positive
	// (0 is the default, no cap).
	maxPageSet bool
	// retention is how long the claim store keeps finished items.
	retention claim.Retention
	// hooks are set by tests alone (export_test.go).
	hooks hooks
}

// hooks run at moments tests wait for; each, if set, runs on the
// goroutine that reached that moment.
type hooks struct {
	// fileRead runs after each read of the watch of the file's writes.
	fileRead func()
	// versionRead runs after each read of data_version by the watcher's
	// goroutine, once the waiters it woke are woken.
	versionRead func()
	// lockBusy runs each time the committer finds the write lock held by
	// another connection.
	lockBusy func()
	// beforeSnapshot runs as an inspection read is about to take its
	// snapshot.
	beforeSnapshot func()
}

func defaultConfig() config {
	return config{sync: SyncFull, poll: DefaultPoll, busy: DefaultBusyTimeout, batch: DefaultBatch,
		readers: DefaultReaders, clock: lease.SystemClock()}
}

// WithSynchronous sets the durability of commits; the default is
// [SyncFull]. See [Synchronous] for what [SyncNormal] trades.
func WithSynchronous(s Synchronous) Option {
	return optionFunc(func(c *config) { c.sync = s })
}

// WithPoll sets how often the store reads whether another process changed
// the file while someone waits (see [DefaultPoll]). d must be positive.
func WithPoll(d time.Duration) Option {
	return optionFunc(func(c *config) { c.poll = d })
}

// WithBusyTimeout sets how long one attempt waits for another process's
// write before it is tried again (see [DefaultBusyTimeout]). d must be at
// least a millisecond.
func WithBusyTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.busy = d })
}

// WithBatch sets the largest number of write calls committed in one
// transaction; 1 commits each call on its own. n must be at least 1; the
// default is [DefaultBatch].
func WithBatch(n int) Option {
	return optionFunc(func(c *config) { c.batch = n })
}

// WithReaders sets how many connections serve reads. n must be at least 1;
// the default is [DefaultReaders].
func WithReaders(n int) Option {
	return optionFunc(func(c *config) { c.readers = n })
}

// WithClock sets the clock every deadline is read from: leases, delays and
// expiries are stored as instants of this clock. Every process sharing a
// file must read the same time, so the default, [lease.SystemClock], the
// host's wall clock, is the one to use outside tests. A fake clock
// (leasetest.FakeClock) lets tests drive time.
func WithClock(c lease.Clock) Option {
	return optionFunc(func(cfg *config) { cfg.clock = c })
}

// WithMaxPages caps the file at n pages of 4 KiB (PRAGMA max_page_count);
// a write that would grow it further fails with an error matching
// [ErrFull], and changes nothing. n must be positive; the default is no
// cap beyond SQLite's own.
func WithMaxPages(n int64) Option {
	return optionFunc(func(c *config) { c.maxPage, c.maxPageSet = n, true })
}

// WithRetention makes a claim store keep finished items for r (see
// claim.Retention): a completed or cancelled item stays, as Completed or
// Cancelled, instead of being deleted, and [ClaimStore.Clean] deletes the
// items whose retention has passed, dead letters included when r.Dead is
// set. The default, the zero Retention, keeps nothing finished and keeps
// dead letters until DeleteDead. Stores sharing a file should share a
// retention: each applies its own to the items it settles, cancels and
// cleans. A negative field is refused with an error naming it. A lock
// provider ignores it.
func WithRetention(r claim.Retention) Option {
	return optionFunc(func(c *config) { c.retention = r })
}

func (c config) check(op string) error {
	if err := c.retention.Check(); err != nil {
		var le *lease.Error
		if errors.As(err, &le) {
			return invalid(op, le.Field, le.Detail)
		}
		return err
	}
	switch {
	case c.sync != SyncFull && c.sync != SyncNormal:
		return invalid(op, "synchronous", c.sync.String()+" is not SyncFull or SyncNormal")
	case c.poll <= 0:
		return invalid(op, "poll", c.poll.String()+" is not positive")
	case c.busy < time.Millisecond:
		return invalid(op, "busy_timeout", c.busy.String()+" is less than 1ms")
	case c.batch < 1:
		return invalid(op, "batch", strconv.Itoa(c.batch)+" is less than 1")
	case c.readers < 1:
		return invalid(op, "readers", strconv.Itoa(c.readers)+" is less than 1")
	case c.clock == nil:
		return invalid(op, "clock", "must not be nil")
	case c.maxPageSet && c.maxPage <= 0:
		return invalid(op, "max_pages", "WithMaxPages("+strconv.FormatInt(c.maxPage, 10)+"): n must be positive")
	}
	return nil
}
