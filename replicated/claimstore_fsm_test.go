package replicated

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimtest"
	"github.com/leasehold/lease/internal/captable"
	"github.com/leasehold/lease/leasetest"
)

// fsmLog stands in for a cluster on a fake clock: every call is an entry
// applied to one FSM, stamped with the clock's time, and a tick is applied
// whenever a deadline armed on the log clock comes due, as the leader's
// expiry loop commits one. The suites then check the ClaimStore, its log
// commands and the FSM's queues with exact times, and the fuzzer can drive
// them.
type fsmLog struct {
	f     *fsm
	clock *leasetest.FakeClock

	mu    sync.Mutex
	index uint64
	timer lease.Timer
}

func newFSMClaimStore(t *testing.T) (*ClaimStore, *leasetest.FakeClock) {
	l := &fsmLog{f: newFSM(nil, func(lease.Lease, lease.EndReason) {}, func() {}),
		clock: leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	s := newClaimStore(l.f, l.call)
	t.Cleanup(func() {
		_ = s.Close()
		l.mu.Lock()
		if l.timer != nil {
			l.timer.Stop()
		}
		l.mu.Unlock()
		l.f.close()
	})
	l.tick() // the log's time starts at the clock's
	return s, l.clock
}

// call applies a write as an entry of its own; a read is served from the
// FSM after a tick, as a linearizable read settles the log's time first.
func (l *fsmLog) call(ctx context.Context, c *claimCall) (*claimReply, error) {
	if c.Op.isRead() {
		l.tick()
		return c.run(ctx, l.f.state.Load().claims.mem, nil)
	}
	l.mu.Lock()
	l.index++
	r := applyAt(l.f, l.index, l.clock.Now(), claimCmd(*c))
	l.rearm()
	l.mu.Unlock()
	return r[0].claim, r[0].err
}

func (l *fsmLog) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.index++
	applyAt(l.f, l.index, l.clock.Now())
	l.rearm()
}

// rearm arms the fake clock for the earliest deadline on the log clock.
func (l *fsmLog) rearm() {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if due, ok := l.f.next(); ok {
		l.timer = l.clock.AfterFunc(due.Sub(l.clock.Now()), l.tick)
	}
}

func TestClaimStoreOnTheLogConformance(t *testing.T) {
	exercised := claimtest.TestStore(t, func(t *testing.T, r claim.Retention) (claim.Store, lease.Clock) {
		s, clock := newFSMClaimStore(t)
		require.NoError(t, s.SetRetention(context.Background(), r))
		return s, clock
	})
	captable.CheckClaimStore(t, "replicated.ClaimStore", (*ClaimStore)(nil), exercised)
}

func FuzzClaimStoreOnTheLog(f *testing.F) {
	claimtest.FuzzStore(f, func(t *testing.T) (claim.Store, *leasetest.FakeClock) {
		return newFSMClaimStore(t)
	})
}

// A loss the node applies before the claim's caller has its answer (a
// follower may apply a claim and its loss before the leader's answer
// arrives) reaches Lost when the answer does; the store remembers a
// bounded number of them.
func TestClaimStoreLossBeforeTheAnswer(t *testing.T) {
	s, _ := newFSMClaimStore(t)
	var got []claim.Ref
	fn := func(r claim.Ref, _ error) { got = append(got, r) }
	for i := range recentLosses + 1 {
		s.lost(claim.Ref{Item: claim.ItemID(i + 1), Token: uint64(i + 1)}, claim.ErrClaimLost)
	}
	s.watch(claim.Ref{Item: 2, Token: 2}, fn)
	require.Equal(t, []claim.Ref{{Item: 2, Token: 2}}, got, "told at once")
	s.watch(claim.Ref{Item: 1, Token: 1}, fn) // the oldest, forgotten: it waits
	require.Len(t, got, 1)
	s.lost(claim.Ref{Item: 1, Token: 1}, claim.ErrClaimLost)
	s.callbacks.Wait() // a loss the node applies is told on a goroutine of its own
	require.Equal(t, []claim.Ref{{Item: 2, Token: 2}, {Item: 1, Token: 1}}, got)
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Empty(t, s.pending)
	require.Len(t, s.recent, recentLosses-1)
}

// A Lost function runs outside the node's apply and the queues' lock, so
// it may call the store: a worker that learns of a loss often looks at its
// queue.
func TestClaimStoreLostMayCallTheStore(t *testing.T) {
	s, clock := newFSMClaimStore(t)
	ctx := ctxT(t)
	_, err := s.Enqueue(ctx, []claim.NewItem{{Queue: "q", MaxAttempts: 2}})
	require.NoError(t, err)
	seen := make(chan claim.Counts, 1)
	_, err = s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: time.Second,
		Lost: func(claim.Ref, error) {
			c, err := s.Counts(ctx, "q")
			if err != nil {
				c.Visible = -1 // fails the assertion below
			}
			seen <- c
		}})
	require.NoError(t, err)
	clock.Advance(2 * time.Second)
	require.Equal(t, 1, (<-seen).Visible, "the lost item is claimable again")
}
