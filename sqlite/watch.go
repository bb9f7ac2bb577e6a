package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/sqlclaim"
)

// watcher tells waiters that the file may have changed. Commits through
// this db wake them at once; commits of other processes are seen by
// reading PRAGMA data_version, on a connection kept for it, every poll
// interval while anyone waits (the value changes when another connection
// committed), and, where the system tells of writes to the write-ahead
// log (watchFiles), after each write until the commit it may be part of
// is seen (see wroteFile). It also keeps one timer, on the store's clock,
// for the earliest instant at which something known to be pending becomes
// due (a delayed item, a lease that ends), since the passing of time
// changes nothing in the file.
type watcher struct {
	d *db

	// waiters wakes every waiter at each change: one key, since the file
	// does not say what changed.
	waiters *sqlclaim.Hub[struct{}]

	mu      sync.Mutex
	closed  bool
	timer   lease.Timer
	timerAt int64 // the instant timer is set for; 0 when none
	// rescan is set when the file changed and the next due instant must
	// be read from it again.
	rescan bool
	// dueSQL, if set, is the query of the earliest instant after :now at
	// which something in the file becomes due, or 0 for none.
	dueSQL string
	active chan struct{} // capacity 1: a waiter arrived
	// written (capacity 1) says that the file was written, maybe by
	// another process (watchWrites), and seenAfter is the count of this
	// store's write locks (committer.locks) past which a read of
	// data_version sees that process's commit, if it was one; stopFiles,
	// if set, stops that watch.
	written   chan struct{}
	seenAfter atomic.Int64
	stopFiles func()
	// before and next are committer.locks and unlocks (locks) as the
	// watch of the file began its read before the last (or started) and
	// its last read; only its goroutine uses them.
	before, next [2]int64
	// arrived (capacity 1) tells the watch of the file that a waiter
	// arrived.
	arrived chan struct{}
	// foreignWrites counts the writes that can only be another process's,
	// and fileReads the reads of the watch of the file, for tests.
	foreignWrites atomic.Int64
	fileReads     atomic.Int64

	// conn is the watcher's own connection, version the last data_version
	// read on it, and the statements are prepared on it once; they belong
	// to the goroutine once it runs.
	conn    *sql.Conn
	version int64
	dataVer *sql.Stmt
	nextDue *sql.Stmt // nil until first needed
}

// start takes the watcher's connection and reads the first data_version,
// before any waiter can arrive: a commit of another process after that is
// a change, whenever the first poll runs.
func (w *watcher) start(ctx context.Context) error {
	conn, err := w.d.read.Conn(ctx)
	if err != nil {
		return err
	}
	if err := w.d.reading(ctx, func() error {
		if w.dataVer == nil {
			st, err := conn.PrepareContext(ctx, "PRAGMA data_version")
			if err != nil {
				return err
			}
			w.dataVer = st
		}
		return w.dataVer.QueryRowContext(ctx).Scan(&w.version)
	}); err != nil {
		if w.dataVer != nil {
			_ = w.dataVer.Close()
		}
		_ = conn.Close()
		return err
	}
	w.conn = conn
	return nil
}

func newWatcher(d *db) *watcher {
	return &watcher{d: d, waiters: sqlclaim.NewHub[struct{}](), active: make(chan struct{}, 1),
		written: make(chan struct{}, 1), arrived: make(chan struct{}, 1)}
}

// watchFiles asks to be told of every write to the write-ahead log, where
// every commit of every process goes first (where the system can): a
// commit of another process is then seen a moment after it, not at the
// next poll. Without it, the poll alone sees them.
func (w *watcher) watchFiles(wg *sync.WaitGroup) {
	w.before = w.locks()
	ww := writeWatch{
		waiting: func() bool { return w.waiters.Waiters() > 0 },
		arrived: w.arrived,
		reading: func() { w.next = w.locks() },
		wrote:   w.wroteFile,
		read:    func() { w.fileReads.Add(1) },
	}
	if hook := w.d.cfg.hooks.fileRead; hook != nil {
		ww.read = func() {
			w.fileReads.Add(1)
			hook()
		}
	}
	if stop, err := watchWrites(w.d.path+"-wal", wg, ww); err == nil {
		w.stopFiles = stop
	}
}

// writeWatch is what the watch of the file's writes asks of the watcher
// (watchWrites).
type writeWatch struct {
	waiting func() bool     // whether anyone waits
	arrived <-chan struct{} // a waiter arrived (capacity 1)
	reading func()          // runs before each read of the writes
	wrote   func()          // runs after each read of the writes
	read    func()          // runs after wrote
}

// locks returns committer.locks and unlocks, in that order: the lock
// taken last is held if unlocks is less.
func (w *watcher) locks() [2]int64 {
	locks := w.d.commit.locks.Load()
	return [2]int64{locks, w.d.commit.unlocks.Load()}
}

// wroteFile is told, on the goroutine of the watch of the file, that the
// write-ahead log was written since it was last told: by this store's
// commits, or another process's, or both; the file does not say which.
// Every write is taken for another process's commit, which the watcher
// looks for (reading data_version now and again shortly, as the commit is
// visible only once synced) until it knows that a read saw that commit:
//
//   - while this store holds the write lock no other process writes, and
//     this store took it only once the other process's commit ended; so
//     a read that begins once this store took the write lock after the
//     writes, or while it still holds the lock it held as they were read,
//     sees the commit (seenAfter), and once that transaction committed a
//     change and woke every waiter, no read is needed (unsettled);
//   - a change of data_version when no commit of this store can have
//     landed since the last read is another process's commit;
//   - or a poll interval passed.
//
// Nothing is dropped: a write read while this store wrote, or after, may
// be another process's commit too, that the waiters of this store wait
// for.
func (w *watcher) wroteFile() {
	now := w.locks()
	after := now[0]
	if now[1] < now[0] {
		// The lock taken last is still held: the writes of another
		// process came before it was taken.
		after--
	}
	if w.before[0] == w.before[1] && now == w.before {
		// This store held no write lock since the previous read began
		// (the writes this read returned came after that): only another
		// process can have written.
		w.foreignWrites.Add(1)
	}
	w.before = w.next
	if after > w.seenAfter.Load() {
		w.seenAfter.Store(after) // only this goroutine stores it
	}
	select {
	case w.written <- struct{}{}:
	default:
	}
}

// recheck is how often the watcher reads data_version at first, after a
// write to the file, until it saw the commit it may be part of (see
// wroteFile) or a poll interval passed: a commit is visible once it
// synced, a fraction of a millisecond on a disk that syncs several
// thousand times a second.
const recheck = 200 * time.Microsecond

// recheckAfter is how long the watcher waits to read data_version again,
// waited after the write it looks for the commit of: recheck, and once
// that has passed a few times, a quarter of the time waited, so that a
// slow commit (a slow disk's sync), or a long poll interval, costs a
// handful of reads more, not one every recheck, and is seen at most a
// quarter later than it could have been.
func recheckAfter(waited time.Duration) time.Duration { return max(recheck, waited/4) }

// wait returns a channel closed at the next change, and a function to call
// when no longer waiting.
func (w *watcher) wait() (<-chan struct{}, func()) {
	ch, stop := w.waiters.Arm(struct{}{}, nil)
	select {
	case w.active <- struct{}{}:
	default:
	}
	select {
	case w.arrived <- struct{}{}:
	default:
	}
	return ch, stop
}

// committed wakes every waiter: a write through this db committed. The
// watcher's goroutine is not woken for it: the next poll sees the commit
// in data_version and reads the next due instant again, and every write of
// this db has armed the timer for what it made due already. A burst of
// commits thus costs the watcher one reading a poll interval, not one
// each.
func (w *watcher) committed() {
	w.mu.Lock()
	w.rescan = true
	w.mu.Unlock()
	w.waiters.WakeAll()
}

// changed wakes every waiter, and asks for the next due instant to be
// read again.
func (w *watcher) changed() {
	w.mu.Lock()
	w.rescan = true
	w.mu.Unlock()
	w.waiters.WakeAll()
	select {
	case w.active <- struct{}{}:
	default:
	}
}

// dueAt makes sure waiters are woken at ns, on the store's clock.
func (w *watcher) dueAt(ns int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armLocked(ns)
}

func (w *watcher) armLocked(ns int64) {
	if w.closed || ns == 0 || (w.timerAt != 0 && w.timerAt <= ns) {
		return
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timerAt = ns
	d := time.Duration(ns - w.d.now())
	w.timer = w.d.clock.AfterFunc(max(d, 0), func() { w.fire(ns) })
}

// fire is the timer's function: time reached ns.
func (w *watcher) fire(ns int64) {
	w.mu.Lock()
	if w.timerAt == ns {
		w.timer, w.timerAt = nil, 0
	}
	w.mu.Unlock()
	w.changed()
}

// close wakes every waiter for good.
func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.waiters.Close()
	w.closed = true
	if w.stopFiles != nil {
		w.stopFiles()
	}
	if w.timer != nil {
		w.timer.Stop()
	}
}

// run is the watcher's goroutine: it polls data_version while anyone waits
// and reads the next due instant after each change.
func (w *watcher) run() {
	ctx := w.d.ctx
	conn, version := w.conn, w.version
	defer func() {
		_ = w.dataVer.Close()
		if w.nextDue != nil {
			_ = w.nextDue.Close()
		}
		_ = conn.Close()
	}()
	tick := time.NewTicker(w.d.cfg.poll)
	defer tick.Stop()
	// soon reads again while another process's commit may be on its way
	// (careful, since the write was read at carefulFrom, for a poll
	// interval at most).
	soon := time.NewTimer(time.Hour)
	soon.Stop()
	defer soon.Stop()
	var carefulFrom time.Time
	careful := false
	// unlocked is committer.unlocks as the last read began: a change that
	// a read sees is this store's own commit only if a lock of its was
	// taken since.
	var unlocked int64
	var scanned time.Time // when the next due instant was last read
	for {
		w.mu.Lock()
		idle := !w.rescan && w.waiters.Waiters() == 0
		w.mu.Unlock()
		if idle {
			select {
			case <-ctx.Done():
				return
			case <-w.active:
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-w.active:
		case <-w.written:
			// The first look after recheck: a commit is visible once
			// synced, a moment after its write.
			careful, carefulFrom = true, time.Now()
			soon.Reset(recheck)
			continue
		case <-soon.C:
			if !careful {
				continue // set for a write since seen
			}
			var now bool
			if careful, now = w.unsettled(soon, carefulFrom); !now {
				continue
			}
		}
		locksBefore := w.d.commit.locks.Load()
		unlocksBefore := w.d.commit.unlocks.Load()
		var v int64
		if err := w.dataVer.QueryRowContext(ctx).Scan(&v); err != nil {
			if careful {
				soon.Reset(recheckAfter(time.Since(carefulFrom)))
			}
			continue
		}
		own := w.d.commit.locks.Load() != unlocked // a commit of this store's may have landed since the last read
		unlocked = unlocksBefore
		if careful {
			if waited := time.Since(carefulFrom); (v != version && !own) || locksBefore > w.seenAfter.Load() ||
				waited >= w.d.cfg.poll {
				careful = false
			} else {
				soon.Reset(recheckAfter(waited))
			}
		}
		w.mu.Lock()
		if v != version {
			w.rescan = true
			w.waiters.WakeAll()
		}
		version = v
		// The next due instant is read at most once a poll interval (see
		// committed).
		rescan, q := w.rescan, w.dueSQL
		if rescan && time.Since(scanned) < w.d.cfg.poll {
			rescan = false // at a later tick
		} else {
			w.rescan = false
		}
		w.mu.Unlock()
		if rescan && q != "" {
			scanned = time.Now()
			if next, err := w.readNextDue(ctx, conn, q); err == nil && next != 0 {
				w.dueAt(next)
			}
		}
		if hook := w.d.cfg.hooks.versionRead; hook != nil {
			hook()
		}
	}
}

// unsettled says, for a write to the file that the watcher looks for the
// commit of since from (see wroteFile), whether to go on looking
// (careful) and whether to read data_version now. Not at all once this
// store took the write lock since, and that transaction committed a
// change and woke every waiter (the other process's commit had ended
// before the lock was taken, and the waiters look at the file after it).
// While such a transaction is under way, later: soon is set, and the read
// takes place after its end if it woke no one.
func (w *watcher) unsettled(soon *time.Timer, from time.Time) (careful, now bool) {
	after := w.seenAfter.Load()
	if w.d.commit.woke.Load() > after {
		return false, false
	}
	locks := w.d.commit.locks.Load()
	if locks > after && w.d.commit.unlocks.Load() < locks {
		soon.Reset(recheckAfter(time.Since(from)))
		return true, false
	}
	return true, true
}

// readNextDue runs q, the next-due query, on conn, preparing it the first
// time.
func (w *watcher) readNextDue(ctx context.Context, conn *sql.Conn, q string) (int64, error) {
	if w.nextDue == nil {
		st, err := conn.PrepareContext(ctx, q)
		if err != nil {
			return 0, err
		}
		w.nextDue = st
	}
	var next int64
	err := w.nextDue.QueryRowContext(ctx, sql.Named("now", w.d.now())).Scan(&next)
	return next, err
}
