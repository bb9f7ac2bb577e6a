package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ticketTTL is the life of a waiter's ticket: it is refreshed every fifth
// of it while its waiter waits, and one not refreshed for ticketTTL is
// stale: its waiter is taken for dead and the waiters behind it go ahead. A
// dead waiter first in line therefore delays the next hand-off by
// ticketTTL at most.
const ticketTTL = 5 * time.Second

// hubRetryMin and hubRetryMax bound the pause between attempts to
// reconnect the listening connection.
const (
	hubRetryMin = 50 * time.Millisecond
	hubRetryMax = 5 * time.Second
)

// hubStatementTimeout bounds each statement the hub runs on its own.
const hubStatementTimeout = 5 * time.Second

// waitHub is what a LockProvider's waiters share, so that waiting costs no pool
// connection per waiter: one connection of its own, outside the pool,
// listening on the table's channel, that wakes the waiters of every name
// notified, and one loop refreshing every live ticket in one statement.
// Both run while at least one waiter waits, and stop with the last.
type waitHub struct {
	p *LockProvider

	mu      sync.Mutex
	waiters int
	stop    context.CancelFunc // the running session's; nil when none
	// names holds the wake-up of each name armed by a waiter, removed when
	// it fires or its last waiter disarms, so it is bounded by the
	// waiters.
	names   map[string]*nameWake
	tickets map[int64]struct{}
}

// nameWake is the channel the waiters of one name share, closed to wake
// them.
type nameWake struct {
	ch   chan struct{}
	refs int
}

func newWaitHub(p *LockProvider) *waitHub {
	return &waitHub{p: p, names: map[string]*nameWake{}, tickets: map[int64]struct{}{}}
}

// join counts one more waiter, starting the hub's goroutines for the first.
func (h *waitHub) join() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.waiters++
	if h.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	go h.listen(ctx)
	go h.refresh(ctx)
}

// leave counts one waiter less, stopping the hub's goroutines with the last.
// They end soon after, on their own.
func (h *waitHub) leave() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.waiters--
	if h.waiters == 0 && h.stop != nil {
		h.stop()
		h.stop = nil
	}
}

// arm returns the channel closed at the next notification of name (or
// when notifications may have been missed), and the function that says the
// waiter no longer needs it. A waiter arms before each attempt, so that
// nothing after the attempt goes unheard.
func (h *waitHub) arm(name string) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.names[name]
	if w == nil {
		w = &nameWake{ch: make(chan struct{})}
		h.names[name] = w
	}
	w.refs++
	return w.ch, func() { h.disarm(name, w) }
}

// disarm drops one waiter's interest in w, removing it with the last.
func (h *waitHub) disarm(name string, w *nameWake) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w.refs--
	if w.refs == 0 && h.names[name] == w {
		delete(h.names, name)
	}
}

// wake wakes the waiters of name.
func (h *waitHub) wake(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.names[name]; w != nil {
		close(w.ch)
		delete(h.names, name)
	}
}

// wakeAll wakes every waiter: when the listening connection starts
// listening, as notifications before it went unheard.
func (h *waitHub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for name, w := range h.names {
		close(w.ch)
		delete(h.names, name)
	}
}

// track adds a ticket to those refreshed, untrack removes it.
func (h *waitHub) track(ticket int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tickets[ticket] = struct{}{}
}

func (h *waitHub) untrack(ticket int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.tickets, ticket)
}

// refresh keeps the tracked tickets fresh until ctx is done.
func (h *waitHub) refresh(ctx context.Context) {
	t := time.NewTicker(h.p.ticketTTL / 5)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		tickets := make([]int64, 0, len(h.tickets))
		for id := range h.tickets {
			tickets = append(tickets, id)
		}
		h.mu.Unlock()
		if len(tickets) == 0 {
			continue
		}
		// A failure is retried at the next tick; tickets outlive a few.
		rctx, cancel := context.WithTimeout(ctx, hubStatementTimeout)
		_, _ = h.p.pool.Exec(rctx, h.p.sql.refreshTickets, tickets)
		cancel()
	}
}

// listen keeps one connection listening on the table's channel until ctx
// is done, reconnecting after a growing pause when it fails. Meanwhile the
// waiters fall back on their timers.
func (h *waitHub) listen(ctx context.Context) {
	pause := hubRetryMin
	for {
		if h.session(ctx) {
			pause = hubRetryMin
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, hubRetryMax)
	}
}

// session runs one listening connection until it fails or ctx is done,
// and reports whether it got as far as listening.
func (h *waitHub) session(ctx context.Context) bool {
	conn, err := pgx.ConnectConfig(ctx, h.p.pool.Config().ConnConfig)
	if err != nil {
		return false
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hubStatementTimeout)
		_ = conn.Close(cctx)
		cancel()
	}()
	var oid int64
	if err := conn.QueryRow(ctx, h.p.sql.oid, h.p.table).Scan(&oid); err != nil {
		return false
	}
	channel := channelName(oid)
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return false
	}
	h.wakeAll()
	for {
		note, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true
		}
		if note.Channel == channel {
			h.wake(note.Payload)
		}
	}
}
