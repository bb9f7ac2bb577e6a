package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

func TestClaimStoreEnqueueClaimComplete(t *testing.T) {
	s := newTestClaimStore(t)
	payload := []byte("hello")
	in := []claim.NewItem{{Queue: "q", Payload: payload, MaxAttempts: 2, Priority: 3, Timeout: 1500 * time.Millisecond}}
	got, err := s.Enqueue(ctx, in)
	require.NoError(t, err)
	require.Len(t, got, 1)
	it := got[0]
	assert.Positive(t, it.ID)
	assert.Equal(t, claim.Visible, it.State)
	assert.Equal(t, 2, it.MaxAttempts)
	assert.Equal(t, 3, it.Priority)
	assert.Equal(t, 1500*time.Millisecond, it.Timeout)
	assert.False(t, it.EnqueuedAt.IsZero())
	assert.Equal(t, it.EnqueuedAt, it.VisibleAt)
	payload[0] = 'X' // the store copied it
	got[0].Payload[1] = 'Y'
	assert.Equal(t, claim.Counts{Visible: 1}, counts(t, s, "q"))

	cs := claimN(t, s, "q", "w1", 10)
	require.Len(t, cs, 1)
	c := cs[0]
	assert.Equal(t, "hello", string(c.Payload))
	assert.Equal(t, it.ID, c.Item)
	assert.True(t, it.EnqueuedAt.Equal(c.EnqueuedAt), "the claim carries its item's EnqueuedAt")
	assert.Equal(t, claim.Ref{Item: it.ID, Token: 1}, c.Ref)
	assert.Equal(t, 1, c.Attempt)
	assert.Equal(t, 2, c.MaxAttempts)
	assert.Equal(t, 3, c.Priority)
	assert.Equal(t, 1500*time.Millisecond, c.Timeout)
	assert.Equal(t, "w1", c.Owner)
	assert.Equal(t, "q", c.Queue)
	// The expiry is the database's: an hour after its now().
	assert.WithinDuration(t, it.EnqueuedAt.Add(long), c.ExpiresAt, time.Minute)
	assert.Equal(t, claim.Counts{Claimed: 1}, counts(t, s, "q"))
	assert.Equal(t, claim.Claimed, lookup(t, s, it.ID).State)
	assert.Empty(t, claimN(t, s, "q", "w2", 10), "a live claim is not claimable")

	require.NoError(t, s.Settle(ctx, complete(c)))
	assert.Equal(t, claim.Counts{}, counts(t, s, "q"))
	_, err = s.Lookup(ctx, it.ID)
	require.ErrorIs(t, err, claim.ErrNotFound)
	requireStale(t, s.Settle(ctx, complete(c)))

	none, err := s.Enqueue(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestClaimStoreClaimOrder(t *testing.T) {
	s := newTestClaimStore(t)
	its := enqueue(t, s,
		claim.NewItem{Queue: "q", Payload: []byte("p5-a"), Priority: 5},
		claim.NewItem{Queue: "q", Payload: []byte("p0-late"), Priority: 0, Delay: time.Hour},
		claim.NewItem{Queue: "q", Payload: []byte("p5-b"), Priority: 5},
		claim.NewItem{Queue: "q", Payload: []byte("p1"), Priority: 1},
		claim.NewItem{Queue: "other", Payload: []byte("elsewhere")},
		claim.NewItem{Queue: "q", Payload: []byte("p9"), Priority: claim.MaxPriority},
	)
	for i := 1; i < len(its); i++ {
		assert.Greater(t, its[i].ID, its[i-1].ID, "IDs follow the enqueue order")
	}
	assert.Equal(t, claim.Delayed, its[1].State)
	assert.Equal(t, claim.Counts{Visible: 4, Delayed: 1}, counts(t, s, "q"))
	got := claimN(t, s, "q", "w", 2)
	assert.Equal(t, []string{"p1", "p5-a"}, payloads(got))
	got = claimN(t, s, "q", "w", 10)
	assert.Equal(t, []string{"p5-b", "p9"}, payloads(got))

	makeDue(t, s, its[1].ID)
	got = claimN(t, s, "q", "w", 10)
	assert.Equal(t, []string{"p0-late"}, payloads(got))
}

func TestClaimStoreKeys(t *testing.T) {
	s := newTestClaimStore(t)
	first := enqueue(t, s,
		claim.NewItem{Queue: "q", Key: "k", Payload: []byte("one")},
		claim.NewItem{Queue: "q", Key: "k", Payload: []byte("dup in batch")},
		claim.NewItem{Queue: "other", Key: "k", Payload: []byte("other queue")},
		claim.NewItem{Queue: "q", Payload: []byte("no key")},
	)
	assert.Equal(t, first[0].ID, first[1].ID)
	assert.Equal(t, "one", string(first[1].Payload))
	assert.NotEqual(t, first[0].ID, first[2].ID)
	assert.Equal(t, "k", first[0].Key)
	assert.Equal(t, claim.Counts{Visible: 2}, counts(t, s, "q"))

	again := enqueue(t, s, claim.NewItem{Queue: "q", Key: "k", Payload: []byte("later")})
	assert.Equal(t, first[0].ID, again[0].ID)
	assert.Equal(t, "one", string(again[0].Payload))
	assert.Equal(t, "k", again[0].Key)

	// A completed item frees its key.
	cs := claimN(t, s, "q", "w", 1)
	require.Equal(t, first[0].ID, cs[0].Item)
	require.NoError(t, s.Settle(ctx, complete(cs[0])))
	fresh := enqueue(t, s, claim.NewItem{Queue: "q", Key: "k", Payload: []byte("fresh")})
	assert.Greater(t, fresh[0].ID, first[3].ID)
}

// An item holding a key may be completed between the insert that found the
// key taken and the read of that item: the key is free then, and Enqueue
// stores the new item instead of failing.
func TestClaimStoreKeyFreedDuringEnqueue(t *testing.T) {
	s := newTestClaimStore(t)
	first := enqueue(t, s, claim.NewItem{Queue: "q", Key: "k", Payload: []byte("one")})
	cs := claimN(t, s, "q", "w", 1)
	other := secondStore(t, s, "completer")
	s.beforeExisting = func() {
		s.beforeExisting = nil
		require.NoError(t, other.Settle(ctx, complete(cs[0])))
	}
	again := enqueue(t, s, claim.NewItem{Queue: "q", Key: "k", Payload: []byte("two")})
	assert.Greater(t, again[0].ID, first[0].ID)
	assert.Equal(t, "two", string(again[0].Payload))
	assert.Equal(t, claim.Counts{Visible: 1}, counts(t, s, "q"))
}

// TestClaimStoreStaleClaimAfterReclaim is the bug class where a worker
// whose claim expired comes back after the item was claimed again: its
// heartbeat, completion or failure must not touch the new claim.
func TestClaimStoreStaleClaimAfterReclaim(t *testing.T) {
	for _, how := range []claim.Settle{claim.SettleComplete, claim.SettleRetry, claim.SettleDead, claim.SettleSnooze} {
		t.Run(how.String(), func(t *testing.T) {
			s := newTestClaimStore(t)
			it := enqueue(t, s, item("q", "job"))[0]
			old := claimN(t, s, "q", "slow", 1)[0]
			expire(t, s, it.ID, time.Second)
			cur := claimN(t, s, "q", "fresh", 1)[0]
			require.Equal(t, it.ID, cur.Item)
			require.Greater(t, cur.Ref.Token, old.Ref.Token)
			assert.Equal(t, 2, cur.Attempt)
			before := lookup(t, s, it.ID)

			_, err := s.Extend(ctx, old.Ref, long)
			requireStale(t, err)
			requireStale(t, s.Settle(ctx, claim.Settlement{Ref: old.Ref, How: how, Reason: "late"}))

			after := lookup(t, s, it.ID)
			assert.Equal(t, before, after, "a stale call changed the item")
			assert.Equal(t, claim.Claimed, after.State)
			require.Len(t, after.History, 1)
			assert.True(t, after.History[0].Lost)
			assert.Equal(t, "slow", after.History[0].Owner)
			assert.Equal(t, 1, after.History[0].Attempt)
			// The new claim is whole.
			exp, err := s.Extend(ctx, cur.Ref, 2*long)
			require.NoError(t, err)
			assert.True(t, exp.After(cur.ExpiresAt))
			require.NoError(t, s.Settle(ctx, complete(cur)))
		})
	}
}

func TestClaimStoreExpiredClaimIsStale(t *testing.T) {
	s := newTestClaimStore(t)
	it := enqueue(t, s, item("q", "job"))[0]
	c := claimN(t, s, "q", "w", 1)[0]
	expire(t, s, it.ID, 0)
	_, err := s.Extend(ctx, c.Ref, long)
	requireStale(t, err)
	requireStale(t, s.Settle(ctx, complete(c)))
	got := lookup(t, s, it.ID)
	assert.Equal(t, claim.Visible, got.State, "an expired claim's item is claimable again")
	require.Len(t, got.History, 1)
	assert.True(t, got.History[0].Lost)
	assert.Equal(t, claim.Counts{Visible: 1}, counts(t, s, "q"))
	requireStale(t, s.Settle(ctx, claim.Settlement{Ref: claim.Ref{Item: it.ID + 1000, Token: 1}, How: claim.SettleComplete}))
}

func TestClaimStoreLostOnLastAttemptDies(t *testing.T) {
	s := newTestClaimStore(t)
	its := enqueue(t, s, claim.NewItem{Queue: "q", Payload: []byte("once"), MaxAttempts: 1}, item("q", "next"))
	c := claimN(t, s, "q", "w", 1)[0]
	require.Equal(t, its[0].ID, c.Item)
	expire(t, s, c.Item, time.Second)

	dead := lookup(t, s, c.Item)
	assert.Equal(t, claim.Dead, dead.State)
	assert.False(t, dead.DeadAt.IsZero())
	require.Len(t, dead.History, 1)
	assert.Equal(t, claim.Failure{Attempt: 1, Owner: "w", At: dead.DeadAt, Reason: "lease expired", Lost: true}, dead.History[0])
	assert.Equal(t, claim.Counts{Visible: 1, Dead: 1}, counts(t, s, "q"))

	// The next Claim writes the death down and claims only the other.
	got := claimN(t, s, "q", "w", 10)
	assert.Equal(t, []string{"next"}, payloads(got))
	assert.Equal(t, dead, lookup(t, s, c.Item), "writing it down changes nothing visible")
	requireStale(t, s.Settle(ctx, complete(c)))
	list, err := s.List(ctx, claim.Query{Queue: "q", State: claim.Dead, Limit: 10})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, dead, list[0])
}

func TestClaimStoreSettleRetryDeadSnooze(t *testing.T) {
	s := newTestClaimStore(t)
	it := enqueue(t, s, claim.NewItem{Queue: "q", Payload: []byte("x"), MaxAttempts: 5})[0]

	c := claimN(t, s, "q", "w1", 1)[0]
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleRetry, Reason: "boom"}))
	got := lookup(t, s, it.ID)
	assert.Equal(t, claim.Visible, got.State)
	assert.Equal(t, 1, got.Attempts)
	require.Len(t, got.History, 1)
	assert.Equal(t, "boom", got.History[0].Reason)
	assert.Equal(t, "w1", got.History[0].Owner)
	assert.Equal(t, 1, got.History[0].Attempt)
	assert.False(t, got.History[0].Lost)

	c = claimN(t, s, "q", "w2", 1)[0]
	assert.Equal(t, 2, c.Attempt)
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleSnooze, After: time.Hour}))
	got = lookup(t, s, it.ID)
	assert.Equal(t, claim.Delayed, got.State)
	assert.Equal(t, 1, got.Attempts, "a snooze spends no attempt")
	assert.Len(t, got.History, 1, "a snooze is no failure")
	assert.Empty(t, claimN(t, s, "q", "w", 1))
	makeDue(t, s, it.ID)

	c = claimN(t, s, "q", "w3", 1)[0]
	assert.Equal(t, 2, c.Attempt)
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleRetry, After: time.Hour, Reason: "later"}))
	assert.Equal(t, claim.Delayed, lookup(t, s, it.ID).State)
	makeDue(t, s, it.ID)

	c = claimN(t, s, "q", "w4", 1)[0]
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleDead, Reason: "poison"}))
	got = lookup(t, s, it.ID)
	assert.Equal(t, claim.Dead, got.State)
	assert.False(t, got.DeadAt.IsZero())
	assert.True(t, got.VisibleAt.IsZero())
	require.Len(t, got.History, 3)
	assert.Equal(t, "poison", got.History[2].Reason)
	assert.Equal(t, claim.Counts{Dead: 1}, counts(t, s, "q"))
	assert.Empty(t, claimN(t, s, "q", "w", 1))

	// Requeued: visible, no attempts used, history kept.
	_, err := s.RequeueDead(ctx, "other", it.ID)
	require.ErrorIs(t, err, claim.ErrNotFound)
	back, err := s.RequeueDead(ctx, "q", it.ID)
	require.NoError(t, err)
	assert.Equal(t, claim.Visible, back.State)
	assert.Zero(t, back.Attempts)
	assert.Len(t, back.History, 3)
	_, err = s.RequeueDead(ctx, "q", it.ID)
	var nf *claim.NotFoundError
	require.ErrorAs(t, err, &nf)
	assert.Equal(t, it.ID, nf.Item)

	c = claimN(t, s, "q", "w5", 1)[0]
	assert.Equal(t, 1, c.Attempt)
	assert.Greater(t, c.Ref.Token, uint64(4), "tokens are never reused, even after a requeue")
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleDead}))
	require.ErrorIs(t, s.DeleteDead(ctx, "other", it.ID), claim.ErrNotFound)
	require.NoError(t, s.DeleteDead(ctx, "q", it.ID))
	require.ErrorIs(t, s.DeleteDead(ctx, "q", it.ID), claim.ErrNotFound)
	assert.Equal(t, claim.Counts{}, counts(t, s, "q"))
}

func TestClaimStoreListLookup(t *testing.T) {
	s := newTestClaimStore(t)
	its := enqueue(t, s, item("q", "a"), item("q", "b"), claim.NewItem{Queue: "q", Payload: []byte("c"), Delay: time.Hour}, item("q2", "d"))
	claimN(t, s, "q", "w", 1)

	all, err := s.List(ctx, claim.Query{Queue: "q", Limit: 10})
	require.NoError(t, err)
	require.Len(t, all, 3)
	assert.Equal(t, []claim.State{claim.Claimed, claim.Visible, claim.Delayed}, []claim.State{all[0].State, all[1].State, all[2].State})
	page, err := s.List(ctx, claim.Query{Queue: "q", After: its[0].ID, Limit: 1})
	require.NoError(t, err)
	require.Len(t, page, 1)
	assert.Equal(t, its[1].ID, page[0].ID)
	delayed, err := s.List(ctx, claim.Query{Queue: "q", State: claim.Delayed, Limit: 10})
	require.NoError(t, err)
	require.Len(t, delayed, 1)
	assert.Equal(t, "c", string(delayed[0].Payload))
	none, err := s.List(ctx, claim.Query{Queue: "nope", Limit: 10})
	require.NoError(t, err)
	assert.NotNil(t, none)
	assert.Empty(t, none)

	got := lookup(t, s, its[3].ID)
	assert.Equal(t, "q2", got.Queue)
	assert.Equal(t, its[3].EnqueuedAt, got.EnqueuedAt)
	// Returned values share nothing with the store.
	got.Payload[0] = 'Z'
	assert.Equal(t, "d", string(lookup(t, s, its[3].ID).Payload))
	assert.Equal(t, claim.Counts{}, counts(t, s, "unknown"))
}

func TestClaimStoreCancel(t *testing.T) {
	s := newTestClaimStore(t)
	its := enqueue(t, s, item("q", "waiting"), item("q", "claimed"))
	require.NoError(t, s.Cancel(ctx, "q", its[0].ID))
	require.ErrorIs(t, s.Cancel(ctx, "q", its[0].ID), claim.ErrNotFound)
	require.ErrorIs(t, s.Cancel(ctx, "other", its[1].ID), claim.ErrNotFound)

	type loss struct {
		r     claim.Ref
		cause error
	}
	lost := make(chan loss, 4)
	cs, err := s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: long,
		Lost: func(r claim.Ref, cause error) { lost <- loss{r, cause} }})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	require.NoError(t, s.Cancel(ctx, "q", cs[0].Item))
	l := <-lost
	assert.Equal(t, cs[0].Ref, l.r)
	require.ErrorIs(t, l.cause, claim.ErrCancelled)
	require.ErrorIs(t, l.cause, lease.ErrStaleUse)
	requireStale(t, s.Settle(ctx, complete(cs[0])))
	_, err = s.Extend(ctx, cs[0].Ref, long)
	requireStale(t, err)
	assert.Equal(t, claim.Counts{}, counts(t, s, "q"))
	assert.Empty(t, lost, "Lost is called once")
}

// TestClaimStoreCancelFromAnotherProcess cancels a claim through another
// store: the notification reaches the claiming store, which calls Lost.
func TestClaimStoreCancelFromAnotherProcess(t *testing.T) {
	s := newTestClaimStore(t)
	other := secondStore(t, s, "lease-claims-other")
	enqueue(t, s, item("q", "x"))
	lost := make(chan error, 1)
	// Wait until the listener listens: its start wakes every waiter.
	ready, stop := s.Notify("q")
	cs, err := s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: long,
		Lost: func(_ claim.Ref, cause error) { lost <- cause }})
	require.NoError(t, err)
	<-ready
	stop()
	require.NoError(t, other.Cancel(ctx, "q", cs[0].Item))
	require.ErrorIs(t, <-lost, claim.ErrCancelled)
}

func TestClaimStoreNotify(t *testing.T) {
	s := newTestClaimStore(t, WithPoll(time.Hour))
	other := secondStore(t, s, "lease-claims-other")

	// The first wait starts the listener, whose start wakes it.
	ready, stop := s.Notify("q")
	<-ready
	stop()

	ready, stop = s.Notify("q")
	elsewhere, stopElsewhere := s.Notify("elsewhere")
	enqueue(t, other, item("q", "x"))
	<-ready
	stop()
	select {
	case <-elsewhere:
		t.Fatal("a queue's notification woke another queue")
	default:
	}
	stopElsewhere()

	// A retry due at once wakes the queue.
	c := claimN(t, s, "q", "w", 1)[0]
	ready, stop = s.Notify("q")
	require.NoError(t, other.Settle(ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleRetry}))
	<-ready
	stop()

	// So does a requeued dead letter.
	c = claimN(t, s, "q", "w", 1)[0]
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleDead}))
	ready, stop = s.Notify("q")
	_, err := other.RequeueDead(ctx, "q", c.Item)
	require.NoError(t, err)
	<-ready
	stop()

	// Close wakes everyone, and later waits end at once.
	ready, stop = s.Notify("q")
	defer stop()
	require.NoError(t, other.Close())
	require.NoError(t, s.Close())
	<-ready
	ready, stop = s.Notify("q")
	<-ready
	stop()
}

func TestClaimStoreNotifyPollsAndDelays(t *testing.T) {
	s := newTestClaimStore(t, WithPoll(20*time.Millisecond))
	// The poll closes the channel with no notification at all.
	for range 3 {
		ready, stop := s.Notify("silent")
		<-ready
		stop()
	}
	ds := newTestClaimStore(t, WithPoll(time.Hour))
	ready, stop := ds.Notify("q")
	<-ready // the listener's start
	stop()
	ready, stop = ds.Notify("q")
	defer stop()
	// An item this store delays wakes its waiters when it is due.
	enqueue(t, ds, claim.NewItem{Queue: "q", Payload: []byte("soon"), Delay: 30 * time.Millisecond})
	<-ready
	got, err := ds.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: long})
	require.NoError(t, err)
	for len(got) == 0 {
		// Due on this host's clock may be a hair before the database's.
		<-time.After(time.Millisecond)
		got, err = ds.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: long})
		require.NoError(t, err)
	}
	assert.Equal(t, "soon", string(got[0].Payload))
}

func TestClaimStoreBatchedSettle(t *testing.T) {
	s := newTestClaimStore(t)
	const n = 200
	in := make([]claim.NewItem, n)
	for i := range in {
		in[i] = item("q", fmt.Sprint(i))
	}
	enqueue(t, s, in...)
	cs := claimN(t, s, "q", "w", n)
	require.Len(t, cs, n)
	// Half the goroutines complete their claim; the other half send a
	// stale token for theirs, then complete it. Each gets its own answer.
	var wg sync.WaitGroup
	errs := make([]error, n)
	stale := make([]error, n)
	for i, c := range cs {
		wg.Go(func() {
			if i%2 == 1 {
				bad := c.Ref
				bad.Token++
				stale[i] = s.Settle(ctx, claim.Settlement{Ref: bad, How: claim.SettleComplete})
				_, err := s.Extend(ctx, bad, long)
				if err == nil {
					stale[i] = fmt.Errorf("stale extend succeeded")
				}
			}
			errs[i] = s.Settle(ctx, complete(c))
		})
	}
	wg.Wait()
	sent := s.settles.Batches()
	t.Logf("%d settlements in %d statements", n+n/2, sent)
	assert.Less(t, sent, int64(n), "calls were coalesced")
	for i := range cs {
		require.NoError(t, errs[i], "claim %d", i)
		if i%2 == 1 {
			requireStale(t, stale[i])
		}
	}
	assert.Equal(t, claim.Counts{}, counts(t, s, "q"))
}

func TestClaimStoreSettleSameItemTwiceConcurrently(t *testing.T) {
	s := newTestClaimStore(t, WithBatch(50))
	enqueue(t, s, item("q", "x"))
	c := claimN(t, s, "q", "w", 1)[0]
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() { errs[i] = s.Settle(ctx, complete(c)) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		requireStale(t, err)
	}
	assert.Equal(t, 1, ok, "exactly one completion wins")
}

func TestClaimStoreClosed(t *testing.T) {
	s := newTestClaimStore(t)
	its := enqueue(t, s, item("q", "x"))
	c := claimN(t, s, "q", "w", 1)[0]
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	closed := func(err error) {
		t.Helper()
		require.ErrorIs(t, err, lease.ErrClosed)
	}
	_, err := s.Enqueue(ctx, []claim.NewItem{item("q", "y")})
	closed(err)
	_, err = s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: long})
	closed(err)
	_, err = s.Extend(ctx, c.Ref, long)
	closed(err)
	closed(s.Settle(ctx, complete(c)))
	closed(s.Cancel(ctx, "q", its[0].ID))
	_, err = s.Lookup(ctx, its[0].ID)
	closed(err)
	_, err = s.List(ctx, claim.Query{Queue: "q", Limit: 1})
	closed(err)
	_, err = s.Counts(ctx, "q")
	closed(err)
	_, err = s.RequeueDead(ctx, "q", its[0].ID)
	closed(err)
	closed(s.DeleteDead(ctx, "q", its[0].ID))
	closed(s.Migrate(ctx))
}

func TestClaimStoreContextDone(t *testing.T) {
	s := newTestClaimStore(t)
	enqueue(t, s, item("q", "x"))
	c := claimN(t, s, "q", "w", 1)[0]
	done, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, s.Settle(done, complete(c)), context.Canceled)
	_, err := s.Claim(done, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: long})
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, s.Settle(ctx, complete(c)), "a call refused for its context changed nothing")
}

// TestClaimStoreBatchedClaims has many goroutines claim at once: their
// calls share statements, and each item goes to one of them, in claim
// order within each call.
func TestClaimStoreBatchedClaims(t *testing.T) {
	s := newTestClaimStore(t)
	const workers, each = 50, 2
	in := make([]claim.NewItem, workers*each+5)
	for i := range in {
		in[i] = claim.NewItem{Queue: "q", Payload: []byte(fmt.Sprint(i)), MaxAttempts: 1, Priority: i % 3}
	}
	enqueue(t, s, in...)
	got := make([][]claim.Claim, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			cs, err := s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: fmt.Sprint("w", w), Limit: each, Lease: long})
			assert.NoError(t, err)
			got[w] = cs
		})
	}
	wg.Wait()
	t.Logf("%d claims in %d statements", workers, s.claims.Batches())
	assert.Less(t, s.claims.Batches(), int64(workers), "calls were coalesced")
	seen := map[claim.ItemID]bool{}
	for w, cs := range got {
		require.Len(t, cs, each)
		for i, c := range cs {
			assert.Equal(t, fmt.Sprint("w", w), c.Owner)
			assert.False(t, seen[c.Item], "item %d claimed twice", c.Item)
			seen[c.Item] = true
			if i > 0 {
				assert.LessOrEqual(t, cs[i-1].Priority, c.Priority, "claim order")
			}
		}
	}
	assert.Equal(t, claim.Counts{Visible: 5, Claimed: workers * each}, counts(t, s, "q"))
}
