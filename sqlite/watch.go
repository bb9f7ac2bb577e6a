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
// log (watchFiles), after each write of another process until the value
// changes. It also keeps one timer, on the store's clock, for the
// earliest instant at which something known to be pending becomes due
// (a delayed item, a lease that ends), since the passing of time changes
// nothing in the file.
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
	// written (capacity 1) says that another process may have written
	// the file (watchWrites); stopFiles, if set, stops that watch.
	written   chan struct{}
	stopFiles func()
	// arrived (capacity 1) tells the watch of the file that a waiter
	// arrived.
	arrived chan struct{}
	// foreignWrites counts the writes taken for another process's, and
	// fileReads the reads of the watch of the file, for tests.
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
	ww := writeWatch{
		// This store's own commits write the log too, and wake their
		// waiters themselves: writes seen while it writes, or after it
		// wrote, are let be.
		writing: func() bool { return w.d.commit.writing.Load() > 0 },
		written: w.d.commit.wroteFile.Load,
		waiting: func() bool { return w.waiters.Waiters() > 0 },
		arrived: w.arrived,
		foreign: w.fileWritten,
		read:    func() { w.fileReads.Add(1) },
	}
	if hook := fileReadHook; hook != nil {
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
	writing func() bool     // whether this store is writing
	written func() int64    // counts this store's commits that wrote
	waiting func() bool     // whether anyone waits
	arrived <-chan struct{} // a waiter arrived (capacity 1)
	foreign func()          // told of another process's write
	read    func()          // runs after each read of the writes
}

// fileReadHook, if set as a store opens, runs after each read of the
// watch of its file: for tests.
var fileReadHook func()

// fileWritten is told of a write to the write-ahead log by another
// process: the watcher reads data_version now and again shortly, until it
// changes, since the commit that wrote is visible only once synced.
func (w *watcher) fileWritten() {
	w.foreignWrites.Add(1)
	select {
	case w.written <- struct{}{}:
	default:
	}
}

// recheck is how often the watcher reads data_version, after another
// process wrote, until it changes or a poll interval passed: a commit is
// visible once it synced, a fraction of a millisecond on a disk that syncs
// several thousand times a second.
const recheck = 200 * time.Microsecond

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
	// (until soonUntil).
	soon := time.NewTimer(time.Hour)
	soon.Stop()
	defer soon.Stop()
	var soonUntil time.Time
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
			soonUntil = time.Now().Add(w.d.cfg.poll)
		case <-soon.C:
		}
		var v int64
		if err := w.dataVer.QueryRowContext(ctx).Scan(&v); err != nil {
			continue
		}
		switch {
		case v != version || soonUntil.IsZero():
			soonUntil = time.Time{}
		case time.Now().Before(soonUntil):
			soon.Reset(recheck)
		default:
			soonUntil = time.Time{}
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
	}
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
