package claim_test

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// FuzzBroker runs a sequence of operations, decoded three bytes at a time,
// on a Broker over a fake clock and on a small reference model, and checks
// after every step that they agree on every result, error and count.
func FuzzBroker(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 1, 3, 0, 0})                            // enqueue, claim, complete
	f.Add([]byte{0, 0, 0, 1, 0, 0, 5, 4, 0, 2, 0, 0, 1, 1, 0})          // claim, let it expire, heartbeat stale, claim again
	f.Add([]byte{0, 8, 0, 1, 0, 0, 4, 0, 0, 5, 1, 0, 1, 0, 0, 4, 0, 0}) // fail to dead, requeue path
	f.Add([]byte{0, 0, 1, 0, 1, 1, 0, 5, 2, 1, 1, 2, 5, 3, 0, 1, 0, 2}) // delays and a second queue
	f.Add([]byte{0, 16, 0, 0, 16, 0, 1, 0, 2, 8, 0, 0, 1, 3, 2, 6, 0, 0, 7, 0, 0})
	f.Add([]byte{0, 8, 0, 0, 24, 0, 0, 0, 0, 1, 0, 2, 10, 0, 2, 9, 1, 0, 1, 0, 2}) // priorities, snooze, cancel
	f.Add([]byte{0, 0, 0, 1, 0, 0, 9, 0, 0, 3, 0, 0, 0, 0, 0, 10, 0, 3, 5, 4, 0})  // cancel a claimed item
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 3*200 {
			ops = ops[:3*200]
		}
		runModel(t, ops)
	})
}

var (
	fuzzQueues    = []string{"a", "b"}
	fuzzOwners    = []string{"w1", "w2"}
	fuzzDurations = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second}
	fuzzAdvances  = []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 7 * time.Second}
	fuzzDelays    = []time.Duration{0, 0, time.Second, 4 * time.Second}
	fuzzMaxes     = []int{0, 1, 2, 3} // 0: the default
	fuzzPriority  = []int{0, 0, 1, claim.MaxPriority}
	fuzzBackoffs  = [][2]time.Duration{{time.Second, 4 * time.Second}, {time.Second, time.Second}, {2 * time.Second, 3 * time.Second}}
)

func runModel(t *testing.T, ops []byte) {
	b, svc, clk := newBroker(t, claim.WithMaxAttempts(4))
	m := &model{now: t0, items: map[claim.ItemID]*mItem{}, defaultMax: 4}
	var claims []claim.Claim // every claim handed out, live or stale
	var ids []claim.ItemID   // every item ID handed out
	pick := func(n int, x byte) int { return int(x) % n }

	for i := 0; i+2 < len(ops); i += 3 {
		op, x, y := ops[i]%11, ops[i+1], ops[i+2]
		step := fmt.Sprintf("step %d op %d(%d,%d)", i/3, op, x, y)
		switch op {
		case 0: // enqueue
			queue := fuzzQueues[pick(2, x)]
			delay := fuzzDelays[pick(4, x>>1)]
			maxA := fuzzMaxes[pick(4, y)]
			key := ""
			if y&4 != 0 {
				key = fmt.Sprint("k", (y>>3)%3)
			}
			prio := fuzzPriority[pick(4, x>>3)]
			opts := []claim.EnqueueOption{claim.Delay(delay), claim.Priority(prio)}
			if maxA != 0 {
				opts = append(opts, claim.MaxAttempts(maxA))
			}
			if key != "" {
				opts = append(opts, claim.Key(key))
			}
			it, err := b.Enqueue(ctx, queue, []byte{x, y}, opts...)
			require.NoError(t, err, step)
			require.Equal(t, m.enqueue(queue, key, delay, maxA, prio), it.ID, step)
			ids = append(ids, it.ID)
		case 1: // claim
			queue, owner := fuzzQueues[pick(2, x)], fuzzOwners[pick(2, x>>1)]
			limit, d := 1+pick(3, y), fuzzDurations[pick(3, y>>2)]
			got, err := b.Claim(ctx, queue, owner, limit, d)
			require.NoError(t, err, step)
			want := m.claim(queue, limit, d)
			require.Len(t, got, len(want), step)
			for j, c := range got {
				require.Equal(t, want[j].id, c.Item, step)
				require.Equal(t, want[j].attempts, c.Attempt, step)
				require.Equal(t, m.now.Add(d), c.ExpiresAt, step)
				claims = append(claims, c)
				m.claims = append(m.claims, mClaim{item: want[j].id, token: want[j].token})
			}
		case 2, 3, 4, 8, 10: // heartbeat, complete, fail, revoke, snooze an old or live claim
			if len(claims) == 0 {
				continue
			}
			j := pick(len(claims), x)
			c, mc := claims[j], m.claims[j]
			live := m.live(mc)
			var err error
			switch op {
			case 2:
				d := fuzzDurations[pick(3, y)]
				var c2 claim.Claim
				c2, err = b.Heartbeat(ctx, c, d)
				if live {
					require.NoError(t, err, step)
					require.Equal(t, m.now.Add(d), c2.ExpiresAt, step)
					m.items[mc.item].expires = m.now.Add(d)
				}
			case 3:
				err = b.Complete(ctx, c)
				if live {
					require.NoError(t, err, step)
					delete(m.items, mc.item)
				}
			case 4:
				bo := fuzzBackoffs[pick(3, y)]
				var out claim.Outcome
				out, err = b.Fail(ctx, c, "r", bo[0], bo[1])
				if live {
					require.NoError(t, err, step)
					require.Equal(t, m.fail(mc.item, bo[0], bo[1]), out, step)
				}
			case 8:
				_, err = svc.Revoke(ctx, lease.ID(c.Ref.Token))
				if live {
					require.NoError(t, err, step)
					m.lose(m.items[mc.item], m.now)
				}
			case 10:
				after := fuzzDelays[pick(4, y)]
				err = b.Snooze(ctx, c, after)
				if live {
					require.NoError(t, err, step)
					m.snooze(mc.item, after)
				}
			}
			if !live {
				require.Error(t, err, step)
				if op != 8 {
					requireStale(t, err)
				}
			}
		case 5: // advance
			d := fuzzAdvances[pick(5, x)]
			clk.Advance(d)
			m.now = m.now.Add(d)
		case 9: // cancel an item in any state (or one that is gone)
			if len(ids) == 0 {
				continue
			}
			id, queue := ids[pick(len(ids), x)], fuzzQueues[pick(2, y)]
			err := b.Cancel(ctx, queue, id)
			m.settle()
			if it := m.items[id]; it == nil || it.queue != queue {
				require.ErrorIs(t, err, claim.ErrNotFound, step)
				break
			}
			require.NoError(t, err, step)
			delete(m.items, id)
		case 6, 7: // requeue or delete a dead letter (or something else)
			if len(ids) == 0 {
				continue
			}
			id, queue := ids[pick(len(ids), x)], fuzzQueues[pick(2, y)]
			var err error
			if op == 6 {
				_, err = b.RequeueDead(ctx, queue, id)
			} else {
				err = b.DeleteDead(ctx, queue, id)
			}
			m.settle()
			it := m.items[id]
			if it == nil || it.state != claim.Dead || it.queue != queue {
				require.ErrorIs(t, err, claim.ErrNotFound, step)
				break
			}
			require.NoError(t, err, step)
			if op == 6 {
				it.attempts = 0
				it.state, it.visibleAt = claim.Visible, m.now
			} else {
				delete(m.items, id)
			}
		}
		m.settle()
		m.check(t, b, step)
	}
}

// model is the reference: a plain list of items, scanned in full.
type model struct {
	now        time.Time
	lastID     claim.ItemID
	lastToken  int
	defaultMax int
	items      map[claim.ItemID]*mItem
	claims     []mClaim
}

type mItem struct {
	id        claim.ItemID
	queue     string
	key       string
	priority  int
	state     claim.State
	attempts  int
	max       int
	visibleAt time.Time
	expires   time.Time
	token     int // the current claim
}

type mClaim struct {
	item  claim.ItemID
	token int
}

func (m *model) enqueue(queue, key string, delay time.Duration, maxA, prio int) claim.ItemID {
	m.settle()
	for _, it := range m.items {
		if key != "" && it.queue == queue && it.key == key {
			return it.id
		}
	}
	m.lastID++
	it := &mItem{id: m.lastID, queue: queue, key: key, priority: prio, max: cmp.Or(maxA, m.defaultMax), state: claim.Visible, visibleAt: m.now.Add(delay)}
	if delay > 0 {
		it.state = claim.Delayed
	}
	m.items[it.id] = it
	return it.id
}

// settle applies everything due at now: delayed items become visible and
// expired claims are lost.
func (m *model) settle() {
	for _, it := range m.items {
		switch {
		case it.state == claim.Delayed && !it.visibleAt.After(m.now):
			it.state = claim.Visible
		case it.state == claim.Claimed && !it.expires.After(m.now):
			m.lose(it, it.expires)
		}
	}
}

func (m *model) lose(it *mItem, at time.Time) {
	it.token = 0
	if it.attempts >= it.max {
		it.state = claim.Dead
		return
	}
	it.state, it.visibleAt = claim.Visible, at
}

func (m *model) claim(queue string, limit int, d time.Duration) []*mItem {
	m.settle()
	var visible []*mItem
	for _, it := range m.items {
		if it.queue == queue && it.state == claim.Visible {
			visible = append(visible, it)
		}
	}
	slices.SortFunc(visible, func(a, b *mItem) int {
		return cmp.Or(cmp.Compare(a.priority, b.priority), a.visibleAt.Compare(b.visibleAt), cmp.Compare(a.id, b.id))
	})
	visible = visible[:min(limit, len(visible))]
	for _, it := range visible {
		m.lastToken++
		it.state, it.token, it.expires = claim.Claimed, m.lastToken, m.now.Add(d)
		it.attempts++
	}
	return visible
}

func (m *model) live(c mClaim) bool {
	m.settle()
	it := m.items[c.item]
	return it != nil && it.state == claim.Claimed && it.token == c.token
}

func (m *model) fail(id claim.ItemID, base, maxDelay time.Duration) claim.Outcome {
	it := m.items[id]
	it.token = 0
	if it.attempts >= it.max {
		it.state = claim.Dead
		return claim.DeadLettered
	}
	delay := base
	for range it.attempts - 1 {
		delay = min(2*delay, maxDelay)
	}
	it.visibleAt = m.now.Add(min(delay, maxDelay))
	it.state = claim.Delayed
	if delay == 0 {
		it.state = claim.Visible
	}
	return claim.Requeued
}

// snooze gives the claimed item id back after after, its attempt unspent.
func (m *model) snooze(id claim.ItemID, after time.Duration) {
	it := m.items[id]
	it.token = 0
	it.attempts--
	it.visibleAt = m.now.Add(after)
	it.state = claim.Delayed
	if after == 0 {
		it.state = claim.Visible
	}
}

func (m *model) check(t *testing.T, b *claim.Broker, step string) {
	t.Helper()
	want := map[string]claim.Counts{}
	for _, it := range m.items {
		c := want[it.queue]
		switch it.state {
		case claim.Visible:
			c.Visible++
		case claim.Delayed:
			c.Delayed++
		case claim.Claimed:
			c.Claimed++
		case claim.Dead:
			c.Dead++
		}
		want[it.queue] = c

		got, ok := lookup(t, b, it.id)
		require.True(t, ok, "%s: item %d", step, it.id)
		require.Equal(t, it.state, got.State, "%s: item %d", step, it.id)
		require.Equal(t, it.attempts, got.Attempts, "%s: item %d", step, it.id)
		if it.state == claim.Visible || it.state == claim.Delayed {
			require.Equal(t, it.visibleAt, got.VisibleAt, "%s: item %d", step, it.id)
		}
	}
	for _, queue := range fuzzQueues {
		require.Equal(t, want[queue], countsOf(t, b, queue), "%s: queue %s", step, queue)
		var wantIDs, gotIDs []claim.ItemID
		for _, it := range m.items {
			if it.queue == queue {
				wantIDs = append(wantIDs, it.id)
			}
		}
		slices.Sort(wantIDs)
		listed, err := b.List(ctx, claim.Query{Queue: queue, Limit: 1 << 10})
		require.NoError(t, err, step)
		for _, it := range listed {
			gotIDs = append(gotIDs, it.ID)
		}
		require.Equal(t, wantIDs, gotIDs, "%s: List of queue %s", step, queue)
	}
	for id := claim.ItemID(1); id <= m.lastID+1; id++ {
		if m.items[id] == nil {
			_, ok := lookup(t, b, id)
			require.False(t, ok, "%s: item %d is gone", step, id)
		}
	}
}
