package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/lease/internal/sqlclaim"
)

// ticketTTL is the life of a waiter's ticket: it is refreshed every fifth
// of it while its waiter waits, and one not refreshed for ticketTTL is
// stale: its waiter is taken for dead and the waiters behind it go ahead. A
// dead waiter first in line therefore delays the next hand-off by
// ticketTTL at most.
const ticketTTL = 5 * time.Second

// hubRetryMax bounds the pause between attempts to reconnect the
// listening connection.
const hubRetryMax = 5 * time.Second

// hubStatementTimeout bounds each statement the hub runs on its own.
const hubStatementTimeout = 5 * time.Second

// waitHub is what a LockProvider's waiters share, so that waiting costs no pool
// connection per waiter: one connection of its own, outside the pool,
// listening on the table's channel, that wakes the waiters of every name
// notified, and one loop refreshing every live ticket in one statement.
// Both run while at least one waiter waits, and stop with the last.
type waitHub struct {
	p *LockProvider

	// names holds the wake-up of each name armed by a waiter, removed when
	// it fires or its last waiter disarms, so it is bounded by the
	// waiters.
	names *sqlclaim.Hub[string]

	mu      sync.Mutex
	waiters int
	stop    context.CancelFunc // the running session's; nil when none
	tickets map[int64]struct{}
}

func newWaitHub(p *LockProvider) *waitHub {
	return &waitHub{p: p, names: sqlclaim.NewHub[string](), tickets: map[int64]struct{}{}}
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
func (h *waitHub) arm(name string) (<-chan struct{}, func()) { return h.names.Arm(name, nil) }

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
// is done. Meanwhile the waiters fall back on their timers.
func (h *waitHub) listen(ctx context.Context) {
	l := &listener{
		cfg: h.p.pool.Config().ConnConfig, oid: h.p.sql.oid, table: h.p.table, channel: channelName,
		listening: func(context.Context, *pgx.Conn) error {
			h.names.WakeAll()
			return nil
		},
		note: h.names.Wake,
	}
	l.run(ctx, hubRetryMax)
}
