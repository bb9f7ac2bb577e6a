package postgres

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/internal/sqlclaim"
)

// claimNotifier is a store's Notify: the waiters of each queue, woken by
// the notifications one shared listening connection receives, by a poll
// timer, or at the earliest due time of a delayed item the store knows of.
type claimNotifier struct {
	s      *ClaimStore
	queues *sqlclaim.Hub[string]

	mu      sync.Mutex
	started bool
	closed  bool
	// due is, per queue, the earliest time (on this host's clock) at which
	// an item this store delayed becomes claimable; entries in the past are
	// dropped as the map grows past twice the size it had after the last
	// pruning, so it stays bounded by the queues with future items.
	due      map[string]time.Time
	duePrune int
}

func newClaimNotifier(s *ClaimStore) *claimNotifier {
	return &claimNotifier{s: s, queues: sqlclaim.NewHub[string](), due: map[string]time.Time{}, duePrune: 64}
}

// notify is ClaimStore.Notify.
func (n *claimNotifier) notify(queue string) (<-chan struct{}, func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.closed {
		n.startLocked()
	}
	return n.queues.Arm(queue, func() time.Duration {
		wait := n.s.poll
		if at, ok := n.due[queue]; ok {
			left := time.Until(at)
			if left <= 0 {
				delete(n.due, queue)
			}
			wait = min(wait, max(left, 1))
		}
		return wait
	})
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

// close wakes every waiter and makes later waits return at once.
func (n *claimNotifier) close() {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	n.queues.Close()
}

// dueAt records that an item of queue becomes claimable at at (this host's
// clock), so that waiters of queue wake then even with no notification.
func (n *claimNotifier) dueAt(queue string, at time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	n.queues.WakeBy(queue, at)
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
// is done.
func (n *claimNotifier) listen(ctx context.Context) {
	defer n.s.wg.Done()
	l := &listener{
		cfg: n.s.pool.Config().ConnConfig, oid: n.s.sql.oid, table: n.s.table, channel: claimChannel,
		before: func() {
			if n.s.beforeListen != nil {
				n.s.beforeListen()
			}
		},
		listening: func(ctx context.Context, conn *pgx.Conn) error {
			// Whatever happened before this connection listened went
			// unheard.
			n.queues.WakeAll()
			return n.catchUp(ctx, conn)
		},
		note: n.handle,
	}
	l.run(ctx, n.s.poll)
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
		n.queues.Wake(payload[len(noteQueue):])
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
