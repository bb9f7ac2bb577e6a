package replicated

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
)

// woken waits for ch to close.
func woken(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitLimit):
		t.Fatalf("no wake-up: %s", what)
	}
}

// Workers on followers are woken by what the log makes claimable: an
// enqueue, a delay ended, a claim lost, a resume. No wake-up is a poll.
func TestClaimStoreNotifyWakesWorkersOnEveryNode(t *testing.T) {
	c, stores := newClaimCluster(t, 3, memStores)
	ctx := ctxT(t)
	l := c.leader()
	f1, f2 := (l+1)%3, (l+2)%3
	one := func(q string, delay time.Duration) claim.NewItem {
		return claim.NewItem{Queue: q, MaxAttempts: 2, Delay: delay}
	}

	ready, stop := stores[f1].Notify("enq")
	_, err := stores[f2].Enqueue(ctx, []claim.NewItem{one("enq", 0)})
	require.NoError(t, err)
	woken(t, ready, "enqueue")
	stop()

	_, err = stores[l].Enqueue(ctx, []claim.NewItem{one("later", 300*time.Millisecond)})
	require.NoError(t, err)
	ready, stop = stores[f2].Notify("later")
	woken(t, ready, "a delay ended by a tick")
	stop()

	_, err = stores[l].Enqueue(ctx, []claim.NewItem{one("lost", 0)})
	require.NoError(t, err)
	lostCh := make(chan error, 1)
	cs, err := stores[f1].Claim(ctx, claim.ClaimRequest{Queue: "lost", Owner: "w", Limit: 1, Lease: 300 * time.Millisecond,
		Lost: func(_ claim.Ref, cause error) { lostCh <- cause }})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	ready, stop = stores[f2].Notify("lost")
	woken(t, ready, "a claim's lease ended")
	stop()
	select {
	case cause := <-lostCh:
		require.ErrorIs(t, cause, claim.ErrClaimLost)
	case <-time.After(waitLimit):
		t.Fatal("Lost was not called on the claim's node")
	}

	require.NoError(t, stores[l].Pause(ctx, "paused"))
	_, err = stores[l].Enqueue(ctx, []claim.NewItem{one("paused", 0)})
	require.NoError(t, err)
	ready, stop = stores[f1].Notify("paused")
	defer stop()
	require.NoError(t, stores[f2].Resume(ctx, "paused"))
	woken(t, ready, "resume")
}

// Errors are the package's own and keep their matches across forwarding.
func TestClaimStoreErrors(t *testing.T) {
	c, stores := newClaimCluster(t, 3, memStores)
	ctx := ctxT(t)
	f := (c.leader() + 1) % 3
	_, err := stores[f].Lookup(ctx, 42)
	require.ErrorIs(t, err, claim.ErrNotFound)
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, "replicated", le.Package)

	_, err = stores[f].Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 0, Lease: time.Second})
	require.ErrorIs(t, err, lease.ErrInvalidArgument)
	require.ErrorAs(t, err, &le)
	require.Equal(t, "limit", le.Field)
	require.Equal(t, "replicated", le.Package)

	_, err = stores[f].Extend(ctx, claim.Ref{Item: 1, Token: 9}, time.Second)
	require.ErrorIs(t, err, lease.ErrStaleUse)

	_, err = NewClaimStore(nil)
	require.ErrorIs(t, err, lease.ErrInvalidArgument)
	require.NoError(t, stores[f].Close())
	_, err = stores[f].Counts(ctx, "q")
	require.ErrorIs(t, err, lease.ErrClosed)
	ready, _ := stores[f].Notify("q")
	woken(t, ready, "closed store")
}

// The operations on an item that does not exist answer, on the leader and
// through a follower, the *claim.NotFoundError claim.Memory answers, under
// the package's prefix.
func TestClaimStoreNotFoundKeepsItsType(t *testing.T) {
	c, stores := newClaimCluster(t, 3, memStores)
	ctx := ctxT(t)
	svc, err := lease.New()
	require.NoError(t, err)
	defer func() { require.NoError(t, svc.Close()) }()
	mem, err := claim.NewMemory(svc)
	require.NoError(t, err)
	defer func() { require.NoError(t, mem.Close()) }()
	calls := map[string]func(claim.Store) error{
		"Lookup": func(s claim.Store) error { _, err := s.Lookup(ctx, 42); return err },
		"Cancel": func(s claim.Store) error { return s.Cancel(ctx, "q", 42) },
		"RequeueDead": func(s claim.Store) error {
			_, err := s.RequeueDead(ctx, "q", 42)
			return err
		},
		"DeleteDead": func(s claim.Store) error { return s.DeleteDead(ctx, "q", 42) },
		"RetryNow": func(s claim.Store) error {
			_, err := s.(claimstore.Retrier).RetryNow(ctx, "q", 42)
			return err
		},
	}
	l := c.leader()
	for name, call := range calls {
		var want *claim.NotFoundError
		require.ErrorAs(t, call(mem), &want, name)
		for _, i := range []int{l, (l + 1) % 3} {
			err := call(stores[i])
			var nf *claim.NotFoundError
			require.ErrorAs(t, err, &nf, "%s on node %d: %v", name, i, err)
			assert.Equal(t, *want, *nf, name)
			require.ErrorIs(t, err, claim.ErrNotFound, name)
			var le *lease.Error
			require.ErrorAs(t, err, &le, name)
			assert.Equal(t, "replicated", le.Package, name)
			assert.Equal(t, lease.CodeNotFound, le.Code, name)
			assert.Contains(t, err.Error(), "replicated: ", name)
		}
	}
}

// claimRecord is one claim a worker got.
type claimRecord struct {
	item    claim.ItemID
	attempt int
	token   uint64
}

// A queue burned down by workers on every node while leadership moves
// twice loses no item, and no item is handed to two claims at once: each
// claim of an item has its own attempt and a larger fencing token than
// the claim before it, and each item is completed once.
//
// The workers pause while leadership is handed over: hashicorp/raft's
// pipelined replication can park the old leader's replication for good
// when a follower's refusal meets a new entry to send (its decoder stops
// reading while the sender blocks on it), after which raft's Shutdown
// never returns. Calls still cross the change: a claim made before it is
// settled after it.
func TestClaimStoreSurvivesLeaderChange(t *testing.T) {
	c, stores := newClaimCluster(t, 3, memStores)
	ctx := ctxT(t)
	const items = 1500
	require.NoError(t, stores[0].SetRetention(ctx, claim.Retention{Completed: time.Hour}))
	batch := make([]claim.NewItem, items)
	for i := range batch {
		batch[i] = claim.NewItem{Queue: "burn", MaxAttempts: 100, Payload: fmt.Appendf(nil, "%d", i)}
	}
	_, err := stores[0].Enqueue(ctx, batch)
	require.NoError(t, err)

	var (
		mu        sync.Mutex
		records   []claimRecord
		completed = map[claim.ItemID]int{}
		gate      sync.RWMutex // held by the handovers
	)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 6 {
		s := stores[w%3]
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				gate.RLock()
				cs, err := s.Claim(ctx, claim.ClaimRequest{Queue: "burn", Owner: fmt.Sprint("w", w), Limit: 4, Lease: 2 * time.Second})
				gate.RUnlock()
				if err != nil {
					continue // no leader for a moment, or an uncertain claim: its lease will end
				}
				if len(cs) == 0 {
					ready, stop := s.Notify("burn")
					select {
					case <-ready:
					case <-done:
					case <-time.After(100 * time.Millisecond): // items lost by uncertain claims come back by expiry
					}
					stop()
					continue
				}
				for _, cl := range cs {
					mu.Lock()
					records = append(records, claimRecord{cl.Item, cl.Attempt, cl.Ref.Token})
					mu.Unlock()
					for {
						gate.RLock()
						err := s.Settle(ctx, claim.Settlement{Ref: cl.Ref, How: claim.SettleComplete})
						gate.RUnlock()
						if err == nil {
							mu.Lock()
							completed[cl.Item]++
							mu.Unlock()
						}
						if err == nil || errors.Is(err, lease.ErrStaleUse) || ctx.Err() != nil {
							break
						}
					}
				}
			}
		})
	}
	for range 2 {
		old := c.leader()
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(records) > 0
		}, waitLimit, time.Millisecond)
		gate.Lock()
		require.NoError(t, c.nodes[old].TransferLeadership(ctx, ""))
		c.leaderOtherThan(old)
		gate.Unlock()
	}
	require.Eventually(t, func() bool {
		n, err := stores[1].Counts(ctx, "burn")
		return err == nil && n.Completed == items
	}, 2*waitLimit, 10*time.Millisecond)
	close(done)
	wg.Wait()

	n, err := stores[2].Counts(ctx, "burn")
	require.NoError(t, err)
	require.Equal(t, claim.Counts{Completed: items}, n)
	for id, k := range completed {
		assert.Equal(t, 1, k, "item %d completed %d times", id, k)
	}
	byItem := map[claim.ItemID][]claimRecord{}
	tokens := map[uint64]bool{}
	for _, r := range records {
		require.False(t, tokens[r.token], "token %d handed out twice", r.token)
		tokens[r.token] = true
		byItem[r.item] = append(byItem[r.item], r)
	}
	for id, rs := range byItem {
		slices.SortFunc(rs, func(a, b claimRecord) int { return a.attempt - b.attempt })
		for i := 1; i < len(rs); i++ {
			require.Less(t, rs[i-1].attempt, rs[i].attempt, "item %d: two claims of one attempt", id)
			require.Less(t, rs[i-1].token, rs[i].token, "item %d: a later claim with a smaller token", id)
		}
	}
}

// Every item, claim and paused queue survives a restart of the whole
// cluster from its directories (a snapshot and the log after it), and the
// claims made before it can be settled after it.
func TestClaimStoreSurvivesWholeClusterRestart(t *testing.T) {
	c, stores := newClaimCluster(t, 3, boltStores)
	ctx := ctxT(t)
	s := stores[c.leader()]
	require.NoError(t, s.SetRetention(ctx, claim.Retention{Completed: time.Hour, Cancelled: time.Hour, Dead: time.Hour}))
	batch := make([]claim.NewItem, 40)
	for i := range batch {
		batch[i] = claim.NewItem{Queue: "q", MaxAttempts: 1, Key: fmt.Sprint(i), Payload: []byte{byte(i)}}
	}
	_, err := s.Enqueue(ctx, batch)
	require.NoError(t, err)
	cs, err := s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 10, Lease: time.Hour})
	require.NoError(t, err)
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: cs[0].Ref, How: claim.SettleComplete}))
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: cs[1].Ref, How: claim.SettleDead, Reason: "bad"}))
	for i := range 3 {
		require.NoError(t, c.nodes[i].raft.Snapshot().Error(), "snapshot on node %d", i)
	}
	// After the snapshot: entries only the log holds.
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: cs[2].Ref, How: claim.SettleRetry, After: time.Hour, Reason: "later"}))
	require.NoError(t, s.Cancel(ctx, "q", cs[3].Item))
	require.NoError(t, s.Pause(ctx, "other"))
	before, err := s.List(ctx, claim.Query{Queue: "q", Limit: 100})
	require.NoError(t, err)
	queues, err := s.Queues(ctx, claim.QueueQuery{Limit: 10})
	require.NoError(t, err)
	var top uint64
	for _, cl := range cs {
		top = max(top, cl.Ref.Token)
	}

	dirs, binds := make([]string, 3), make([]string, 3)
	for i := range 3 {
		dirs[i], binds[i] = c.cfgs[i].Dir, c.cfgs[i].Bind
	}
	for _, st := range stores {
		require.NoError(t, st.Close())
	}
	c.close()

	c2 := newCluster(t, clusterOpts{size: 3, stores: boltStores, transport: tcpTransport, insecure: true, raft: patientRaft, dirs: dirs, binds: binds})
	f := (c2.leader() + 1) % 3
	s2, err := NewClaimStore(c2.nodes[f])
	require.NoError(t, err)
	defer func() { _ = s2.Close() }()
	after, err := s2.List(ctx, claim.Query{Queue: "q", Limit: 100})
	require.NoError(t, err)
	require.Equal(t, before, after)
	queues2, err := s2.Queues(ctx, claim.QueueQuery{Limit: 10})
	require.NoError(t, err)
	require.Equal(t, queues, queues2)

	require.NoError(t, s2.Settle(ctx, claim.Settlement{Ref: cs[4].Ref, How: claim.SettleComplete}), "a claim made before the restart")
	dup, err := s2.Enqueue(ctx, []claim.NewItem{{Queue: "q", Key: "5", MaxAttempts: 1}})
	require.NoError(t, err)
	require.True(t, dup[0].Duplicate)
	more, err := s2.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 100, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, more, 30)
	for _, cl := range more {
		require.Greater(t, cl.Ref.Token, top)
	}
}

// A follower that fell behind is sent a snapshot with the queues in it: it
// then holds the leader's items and claims, and its workers are woken as
// before.
func TestClaimStoreLaggingFollowerInstallsSnapshot(t *testing.T) {
	c := newCluster(t, clusterOpts{raft: func(rc *raft.Config) {
		patientRaft(rc)
		rc.SnapshotThreshold = 8
		rc.TrailingLogs = 2
		rc.SnapshotInterval = 50 * time.Millisecond
	}})
	ctx := ctxT(t)
	li := c.leader()
	fi := (li + 1) % 3
	ls, err := NewClaimStore(c.nodes[li])
	require.NoError(t, err)
	defer func() { _ = ls.Close() }()
	fs, err := NewClaimStore(c.nodes[fi])
	require.NoError(t, err)
	defer func() { _ = fs.Close() }()
	ready, stop := fs.Notify("q")
	defer stop()

	c.disconnect(fi)
	for i := range 30 {
		_, err := ls.Enqueue(ctx, []claim.NewItem{{Queue: "q", MaxAttempts: 1, Payload: []byte{byte(i)}}})
		require.NoError(t, err)
	}
	cs, err := ls.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 5, Lease: time.Minute})
	require.NoError(t, err)
	require.NoError(t, ls.Settle(ctx, claim.Settlement{Ref: cs[0].Ref, How: claim.SettleDead, Reason: "r"}))
	require.NoError(t, c.nodes[li].Raft().Snapshot().Error())

	c.reconnect(fi)
	c.caughtUp(fi, li)
	// At least one: the leader keeps snapshotting and trimming its log
	// while the follower catches up, so it may be sent a second.
	require.GreaterOrEqual(t, c.nodes[fi].fsm.restores.Load(), int64(1), "the follower installed a snapshot")
	woken(t, ready, "the snapshot replaced the queues")
	mem := func(i int) []byte { return queueDoc(t, c.nodes[i].fsm) }
	require.Equal(t, string(mem(li)), string(mem(fi)))

	ready, stop2 := fs.Notify("q")
	defer stop2()
	_, err = ls.Enqueue(ctx, []claim.NewItem{{Queue: "q", MaxAttempts: 1}})
	require.NoError(t, err)
	woken(t, ready, "an enqueue after the snapshot")
}

// Reads compare due times with the log's clock, under the same lock as the
// entries they read, and an applied entry's instant is never after that
// clock: an item enqueued visible reads as visible on every node at once,
// never as delayed.
func TestClaimStoreReadsNeverShowAVisibleItemDelayed(t *testing.T) {
	c, stores := newClaimCluster(t, 3, memStores)
	ctx := ctxT(t)
	l := c.leader()
	for round := range 5 {
		queue := fmt.Sprintf("q%d", round)
		from := stores[(l+round)%3]
		items, err := from.Enqueue(ctx, []claim.NewItem{{Queue: queue, MaxAttempts: 1}})
		require.NoError(t, err)
		require.Len(t, items, 1)
		id := items[0].ID
		for i, s := range stores {
			counts, err := s.Counts(ctx, queue)
			require.NoError(t, err)
			assert.Equal(t, claim.Counts{Visible: 1}, counts, "Counts on node %d, round %d", i, round)
			it, err := s.Lookup(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, claim.Visible, it.State, "Lookup on node %d, round %d", i, round)
			listed, err := s.List(ctx, claim.Query{Queue: queue, Limit: 10})
			require.NoError(t, err)
			require.Len(t, listed, 1)
			assert.Equal(t, claim.Visible, listed[0].State, "List on node %d, round %d", i, round)
			queues, err := s.Queues(ctx, claim.QueueQuery{Limit: 100})
			require.NoError(t, err)
			at := slices.IndexFunc(queues, func(q claim.QueueInfo) bool { return q.Name == queue })
			require.GreaterOrEqual(t, at, 0, "Queues on node %d, round %d", i, round)
			assert.Equal(t, claim.Counts{Visible: 1}, queues[at].Counts, "Queues on node %d, round %d", i, round)
		}
	}
}
