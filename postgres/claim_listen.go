package postgres

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/lease/claim"
)

// listenRetryMin and the poll interval bound the pause between attempts to
// reconnect the listening connection.
const listenRetryMin = 50 * time.Millisecond

// closeTimeout bounds the goodbye to the server when the listening
// connection is closed.
const closeTimeout = 5 * time.Second

// claimNotifier is a store's Notify: the waiters of each queue, woken by
// the notifications one shared listening connection receives, by a poll
// timer, or at the earliest due time of a delayed item the store knows of.
type claimNotifier struct {
	s *ClaimStore

	mu      sync.Mutex
	started bool
	closed  bool
	queues  map[string]*queueWake
	// due is, per queue, the earliest time (on this host's clock) at which
	// an item this store delayed becomes claimable; entries in the past are
	// dropped as the map grows past twice the size it had after the last
	// pruning, so it stays bounded by the queues with future items.
	due      map[string]time.Time
	duePrune int
}

// queueWake is the channel the waiters of one queue share.
type queueWake struct {
	ch     chan struct{}
	refs   int
	timer  *time.Timer
	fireAt time.Time // when timer fires
}

var closedWake = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func newClaimNotifier(s *ClaimStore) *claimNotifier {
	return &claimNotifier{s: s, queues: map[string]*queueWake{}, due: map[string]time.Time{}, duePrune: 64}
}

// notify is ClaimStore.Notify.
func (n *claimNotifier) notify(queue string) (<-chan struct{}, func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return closedWake, func() {}
	}
	n.startLocked()
	w := n.queues[queue]
	if w == nil {
		wait := n.s.poll
		if at, ok := n.due[queue]; ok {
			left := time.Until(at)
			if left <= 0 {
				delete(n.due, queue)
			}
			wait = min(wait, max(left, 0))
		}
		w = &queueWake{ch: make(chan struct{}), fireAt: time.Now().Add(wait)}
		w.timer = time.AfterFunc(wait, func() { n.wake(queue, w) })
		n.queues[queue] = w
	}
	w.refs++
	var once sync.Once
	return w.ch, func() { once.Do(func() { n.stop(queue, w) }) }
}

// startLocked starts the listening goroutine once.
func (n *claimNotifier) startLocked() {
	if n.started {
		return
	}
	n.started = true
	n.s.wg.Add(1)
	go n.listen(n.s.ctx)
}

// stop ends one waiter's wait on w.
func (n *claimNotifier) stop(queue string, w *queueWake) {
	n.mu.Lock()
	defer n.mu.Unlock()
	w.refs--
	if w.refs == 0 && n.queues[queue] == w {
		w.timer.Stop()
		delete(n.queues, queue)
	}
}

// wake closes w's channel, if it is still queue's.
func (n *claimNotifier) wake(queue string, w *queueWake) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.queues[queue] == w {
		n.wakeLocked(queue, w)
	}
}

func (n *claimNotifier) wakeLocked(queue string, w *queueWake) {
	w.timer.Stop()
	delete(n.queues, queue)
	close(w.ch)
}

// wakeQueue wakes the waiters of queue.
func (n *claimNotifier) wakeQueue(queue string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if w := n.queues[queue]; w != nil {
		n.wakeLocked(queue, w)
	}
}

// wakeAll wakes every waiter: after the store closed, or when the
// listening connection (re)starts, as notifications may have been missed.
func (n *claimNotifier) wakeAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for q, w := range n.queues {
		n.wakeLocked(q, w)
	}
}

// close wakes every waiter and makes later waits return at once.
func (n *claimNotifier) close() {
	n.wakeAll()
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
}

// dueAt records that an item of queue becomes claimable at at (this host's
// clock), so that waiters of queue wake then even with no notification.
func (n *claimNotifier) dueAt(queue string, at time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	if w := n.queues[queue]; w != nil && at.Before(w.fireAt) {
		w.timer.Reset(max(time.Until(at), 0))
		w.fireAt = at
	}
	if old, ok := n.due[queue]; ok && !at.Before(old) && old.After(time.Now()) {
		return
	}
	n.due[queue] = at
	if len(n.due) >= 2*n.duePrune {
		now := time.Now()
		for q, t := range n.due {
			if !t.After(now) {
				delete(n.due, q)
			}
		}
		n.duePrune = max(64, len(n.due))
	}
}

// listen keeps one connection listening on the table's channel until ctx
// is done, reconnecting after a pause when it fails.
func (n *claimNotifier) listen(ctx context.Context) {
	defer n.s.wg.Done()
	pause := listenRetryMin
	for {
		listened := n.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if listened {
			pause = listenRetryMin
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, max(n.s.poll, listenRetryMin))
	}
}

// session runs one listening connection until it fails or ctx is done,
// and reports whether it got as far as listening.
func (n *claimNotifier) session(ctx context.Context) bool {
	conn, err := pgx.ConnectConfig(ctx, n.s.pool.Config().ConnConfig)
	if err != nil {
		return false
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		_ = conn.Close(cctx)
		cancel()
	}()
	var oid int64
	if err := conn.QueryRow(ctx, n.s.sql.oid, n.s.table).Scan(&oid); err != nil {
		return false
	}
	if n.s.beforeListen != nil {
		n.s.beforeListen()
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{claimChannel(oid)}.Sanitize()); err != nil {
		return false
	}
	// Whatever happened before this connection listened went unheard.
	n.wakeAll()
	if err := n.catchUp(ctx, conn); err != nil {
		return false
	}
	for {
		note, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true
		}
		n.handle(note.Payload)
	}
}

// catchUp calls the Lost functions of the claims this store tracks whose
// items were cancelled while no connection listened (before the first, or
// between two): their Cancel notifications went unheard. It runs once the
// connection listens, so that a later Cancel is heard instead.
func (n *claimNotifier) catchUp(ctx context.Context, conn *pgx.Conn) error {
	s := n.s
	tracked := s.eng.Tracked()
	if len(tracked) == 0 {
		return nil
	}
	ids, tokens := make([]int64, len(tracked)), make([]int64, len(tracked))
	expires := make([]time.Time, len(tracked))
	for i, t := range tracked {
		ids[i], tokens[i], expires[i] = int64(t.Ref.Item), int64(t.Ref.Token), t.Expires
	}
	rows, err := conn.Query(ctx, s.sql.removedLive, ids, tokens, expires)
	if err != nil {
		return err
	}
	var (
		removed   []claim.Ref
		id, token int64
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &token}, func() error {
		removed = append(removed, claim.Ref{Item: claim.ItemID(id), Token: uint64(token)})
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range removed {
		s.eng.LoseRemoved(r, "cancel")
	}
	return nil
}

// handle acts on one notification of the table's channel.
func (n *claimNotifier) handle(payload string) {
	switch {
	case strings.HasPrefix(payload, noteQueue):
		n.wakeQueue(payload[len(noteQueue):])
	case strings.HasPrefix(payload, noteCancel):
		id, token, ok := strings.Cut(payload[len(noteCancel):], ":")
		if !ok {
			return
		}
		i, err1 := strconv.ParseUint(id, 10, 64)
		t, err2 := strconv.ParseUint(token, 10, 64)
		if err1 == nil && err2 == nil {
			n.s.eng.Lose(claim.Ref{Item: claim.ItemID(i), Token: t}, "cancel")
		}
	}
}

// claimChannel is the channel of the claim table with OID oid, as the
// statements name it: every spelling of one table shares it.
func claimChannel(oid int64) string { return "lease_claim_" + strconv.FormatInt(oid, 10) }
