package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/sqlclaim"
)

// watcher tells waiters that the file may have changed. Commits through
// this db wake them at once; commits of other processes are seen by
// reading PRAGMA data_version, on a connection kept for it, every poll
// interval while anyone waits (the value changes when another connection
// committed). It also keeps one timer, on the store's clock, for the
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
	// dueQuery, if set, returns the earliest instant after now at which
	// something in the file becomes due, or 0 for none.
	dueQuery func(ctx context.Context, conn *sql.Conn, now int64) (int64, error)
	active   chan struct{} // capacity 1: a waiter arrived

	// conn is the watcher's own connection, and version the last
	// data_version read on it; both belong to the goroutine once it runs.
	conn    *sql.Conn
	version int64
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
		return conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&w.version)
	}); err != nil {
		_ = conn.Close()
		return err
	}
	w.conn = conn
	return nil
}

func newWatcher(d *db) *watcher {
	return &watcher{d: d, waiters: sqlclaim.NewHub[struct{}](), active: make(chan struct{}, 1)}
}

// wait returns a channel closed at the next change, and a function to call
// when no longer waiting.
func (w *watcher) wait() (<-chan struct{}, func()) {
	ch, stop := w.waiters.Arm(struct{}{}, nil)
	select {
	case w.active <- struct{}{}:
	default:
	}
	return ch, stop
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
	if w.timer != nil {
		w.timer.Stop()
	}
}

// run is the watcher's goroutine: it polls data_version while anyone waits
// and reads the next due instant after each change.
func (w *watcher) run() {
	ctx := w.d.ctx
	conn, version := w.conn, w.version
	defer func() { _ = conn.Close() }()
	tick := time.NewTicker(w.d.cfg.poll)
	defer tick.Stop()
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
		}
		var v int64
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			continue
		}
		w.mu.Lock()
		if v != version {
			w.rescan = true
			w.waiters.WakeAll()
		}
		version = v
		rescan, q := w.rescan, w.dueQuery
		w.rescan = false
		w.mu.Unlock()
		if rescan && q != nil {
			now := w.d.now()
			if next, err := q(ctx, conn, now); err == nil && next != 0 {
				w.dueAt(next)
			}
		}
	}
}
