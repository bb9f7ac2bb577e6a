package claim

import (
	"context"
	"time"
)

// finishedEntry is an item that finished at at, in a retention queue. The
// item may have left that state since (a dead letter requeued or deleted):
// the entry then no longer matches it and is skipped.
type finishedEntry struct {
	it *item
	id ItemID
	at int64
}

// retentionQueue holds finished items of one state in the order they
// finished, which is the order their retention ends in.
type retentionQueue struct {
	state   State
	entries []finishedEntry
	head    int
}

func (q *retentionQueue) push(it *item, at int64) {
	q.entries = append(q.entries, finishedEntry{it: it, id: it.id, at: at})
}

// live reports whether e still stands for its item in q's state.
func (q *retentionQueue) live(e finishedEntry) bool {
	if e.it.id != e.id || e.it.state != q.state {
		return false
	}
	if q.state == Dead {
		return e.it.deadAt == e.at
	}
	return e.it.finished == e.at
}

// pop drops the head entry, giving back the slice's room once half of it
// is spent.
func (q *retentionQueue) pop() {
	q.entries[q.head] = finishedEntry{}
	q.head++
	if q.head == len(q.entries) {
		q.entries, q.head = shrink(q.entries[:0]), 0
	} else if q.head > 64 && q.head*2 > len(q.entries) {
		n := copy(q.entries, q.entries[q.head:])
		clear(q.entries[n:])
		q.entries, q.head = q.entries[:n], 0
	}
}

// each calls f for each live entry, oldest first.
func (q *retentionQueue) each(f func(*item)) {
	for _, e := range q.entries[q.head:] {
		if q.live(e) {
			f(e.it)
		}
	}
}

// SetRetention sets how long the Memory keeps finished items (see
// Retention). It applies to items that finish from then on, and to every
// Clean. A negative field gets an error matching lease.ErrInvalidArgument
// naming it, and nothing changes. The Memory's retention is the zero
// Retention until set.
func (m *Memory) SetRetention(r Retention) error {
	if err := r.Check(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.retention = r
	return nil
}

// retire moves it, which is in no heap, ready queue or claim (a dead
// letter leaves its queue's dead letters here), to state
// (Completed or Cancelled) at now, to be kept for its retention; with none
// it is removed at once.
func (m *Memory) retire(it *item, state State, now int64) {
	if it.state == Dead {
		it.qs.removeDead(it)
		it.state = 0 // in no state's count any more
	}
	keep := m.retention.Completed
	if state == Cancelled {
		keep = m.retention.Cancelled
	}
	if keep <= 0 {
		m.remove(it)
		return
	}
	it.state, it.finished = state, now
	if state == Completed {
		it.qs.completed++
		m.kept[0].push(it, now)
	} else {
		it.qs.cancelled++
		m.kept[1].push(it, now)
	}
}

// Clean removes up to limit finished items whose retention has passed on
// the Memory's clock and returns how many; see claimstore.Cleaner. limit below 1 gets
// an error matching lease.ErrInvalidArgument.
func (m *Memory) Clean(ctx context.Context, limit int) (int, error) {
	const op = "clean"
	if err := checkLimit(ctx, op, limit); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.unlock()
	now, err := m.begin(op)
	if err != nil {
		return 0, err
	}
	removed := 0
	for i := range m.kept {
		q := &m.kept[i]
		keep := [...]time.Duration{m.retention.Completed, m.retention.Cancelled, m.retention.Dead}[i]
		if q.state == Dead && keep == 0 {
			continue // kept until DeleteDead
		}
		for removed < limit && q.head < len(q.entries) {
			e := q.entries[q.head]
			if !q.live(e) {
				q.pop()
				continue
			}
			if addSat(e.at, keep) > now {
				break
			}
			q.pop()
			m.remove(e.it)
			removed++
		}
	}
	return removed, nil
}
