package claim_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

func payloads(cs []claim.Claim) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c.Payload)
	}
	return out
}

// TestClaimOrderIsPriorityThenVisibleAtThenID: lower priority first; within
// a priority, the earliest visible, then the lowest ID.
func TestClaimOrderIsPriorityThenVisibleAtThenID(t *testing.T) {
	b, _, clk := newBroker(t)
	enqueue(t, b, q, "p5-late", claim.Priority(5), claim.Delay(time.Second))
	enqueue(t, b, q, "p5", claim.Priority(5))
	enqueue(t, b, q, "p0-a")
	enqueue(t, b, q, "p9", claim.Priority(claim.MaxPriority))
	enqueue(t, b, q, "p1", claim.Priority(1))
	enqueue(t, b, q, "p0-b")
	clk.Advance(time.Second)
	cs, err := b.Claim(ctx, q, "w", 10, ttl)
	require.NoError(t, err)
	assert.Equal(t, []string{"p0-a", "p0-b", "p1", "p5", "p5-late", "p9"}, payloads(cs))
	assert.Equal(t, 5, cs[3].Priority)
	assert.Equal(t, counts(0, 0, 6, 0), countsOf(t, b, q))
}

func TestPriorityAndTimeoutAreKept(t *testing.T) {
	b, _, _ := newBroker(t)
	it := enqueue(t, b, q, "p", claim.Priority(3), claim.Timeout(time.Minute))
	assert.Equal(t, 3, it.Priority)
	assert.Equal(t, time.Minute, it.Timeout)
	c := claimOne(t, b, q, "w")
	assert.Equal(t, 3, c.Priority)
	assert.Equal(t, time.Minute, c.Timeout)
}

// TestCancelInEveryState removes visible, delayed, dead and claimed items;
// the claim of a cancelled item is stale, and its key is free again.
func TestCancelInEveryState(t *testing.T) {
	b, svc, _ := newBroker(t, claim.WithMaxAttempts(1))
	visible := enqueue(t, b, q, "v", claim.Key("k"))
	delayed := enqueue(t, b, q, "d", claim.Delay(time.Hour))
	claimed := enqueue(t, b, q, "c")
	enqueue(t, b, q, "dead")
	cs, err := b.Claim(ctx, q, "w", 3, ttl)
	require.NoError(t, err)
	require.Equal(t, []string{"v", "c", "dead"}, payloads(cs))
	_, err = b.Fail(ctx, cs[2], "x", time.Second, time.Second)
	require.NoError(t, err)
	require.NoError(t, b.Complete(ctx, cs[0]))
	visible = enqueue(t, b, q, "v2", claim.Key("k"))
	assert.Equal(t, counts(1, 1, 1, 1), countsOf(t, b, q))

	for _, id := range []claim.ItemID{visible.ID, delayed.ID, claimed.ID, cs[2].Item} {
		require.NoError(t, b.Cancel(ctx, q, id))
		_, ok := lookup(t, b, id)
		assert.False(t, ok)
		require.ErrorIs(t, b.Cancel(ctx, q, id), claim.ErrNotFound, "gone")
	}
	assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
	requireStale(t, b.Complete(ctx, cs[1]))
	assert.Zero(t, svc.ActiveCount(), "the cancelled claim's lease is revoked")
	again := enqueue(t, b, q, "v3", claim.Key("k"))
	assert.NotEqual(t, visible.ID, again.ID, "the key went with the item")
	assert.Equal(t, "v3", string(claimOne(t, b, q, "w").Payload))
	require.ErrorIs(t, b.Cancel(ctx, "other", again.ID), claim.ErrNotFound, "another queue's item")
}

// TestCancelledFIFOItemsAreSkipped: items cancelled in the middle of a
// queue are never claimed, and the queue keeps its order.
func TestCancelledFIFOItemsAreSkipped(t *testing.T) {
	b, _, _ := newBroker(t)
	var ids []claim.ItemID
	for _, p := range []string{"a", "b", "c", "d"} {
		ids = append(ids, enqueue(t, b, q, p).ID)
	}
	require.NoError(t, b.Cancel(ctx, q, ids[1]))
	require.NoError(t, b.Cancel(ctx, q, ids[2]))
	cs, err := b.Claim(ctx, q, "w", 10, ttl)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "d"}, payloads(cs))
}

// TestCancelRunningHandler: cancelling a claimed item stops its Work
// handler with a cause matching ErrCancelled, and the item is not settled.
func TestCancelRunningHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		running := make(chan claim.Claim)
		causes := make(chan error, 1)
		stop := startWork(t, b, claim.Worker{Queue: q, Handler: func(ctx context.Context, c claim.Claim) error {
			running <- c
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil
		}})
		it := enqueue(t, b, q, "p")
		<-running
		require.NoError(t, b.Cancel(ctx, q, it.ID))
		cause := <-causes
		require.ErrorIs(t, cause, claim.ErrCancelled)
		require.ErrorIs(t, cause, lease.ErrStaleUse)
		require.NoError(t, stop())
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
	})
}

// TestSnoozeSpendsNoAttemptAndRecordsNoFailure.
func TestSnoozeSpendsNoAttemptAndRecordsNoFailure(t *testing.T) {
	b, _, clk := newBroker(t, claim.WithMaxAttempts(1))
	it := enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w")
	require.NoError(t, b.Snooze(ctx, c, time.Minute))
	requireStale(t, b.Snooze(ctx, c, 0))
	got, _ := lookup(t, b, it.ID)
	assert.Equal(t, claim.Delayed, got.State)
	assert.Equal(t, t0.Add(time.Minute), got.VisibleAt)
	assert.Zero(t, got.Attempts)
	assert.Empty(t, got.History)
	clk.Advance(time.Minute)
	c = claimOne(t, b, q, "w")
	assert.Equal(t, 1, c.Attempt, "the snooze spent no attempt")
	require.NoError(t, b.Snooze(ctx, c, 0))
	assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q), "visible at once")
	requireCode(t, b.Snooze(ctx, claimOne(t, b, q, "w"), -1), lease.CodeInvalidArgument, lease.ErrInvalidArgument)
}

// TestWorkHandlerSnoozes: a handler returning Snooze(d), wrapped or not,
// snoozes its item.
func TestWorkHandlerSnoozes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _, clk := newBroker(t)
		attempts := make(chan int, 2)
		stop := startWork(t, b, claim.Worker{Queue: q, Handler: func(_ context.Context, c claim.Claim) error {
			attempts <- c.Attempt
			if len(attempts) == 1 {
				return errors.Join(errors.New("too early"), claim.Snooze(time.Hour))
			}
			return nil
		}})
		it := enqueue(t, b, q, "p")
		synctest.Wait()
		got, _ := lookup(t, b, it.ID)
		assert.Equal(t, claim.Delayed, got.State)
		assert.Empty(t, got.History)
		clk.Advance(time.Hour)
		synctest.Wait()
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
		require.NoError(t, stop())
		assert.Equal(t, 1, <-attempts)
		assert.Equal(t, 1, <-attempts, "the snooze spent no attempt")
	})
}

// TestWorkTimeouts: the Worker's Timeout cancels a handler and fails its
// item with a reason saying it timed out; an item's own Timeout overrides
// it.
func TestWorkTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t, claim.WithMaxAttempts(1))
		type run struct {
			took  time.Duration
			cause error
		}
		runs := make(chan run, 2)
		stop := startWork(t, b, claim.Worker{Queue: q, Concurrency: 2, Timeout: 5 * time.Second, Handler: func(ctx context.Context, _ claim.Claim) error {
			start := time.Now()
			<-ctx.Done()
			runs <- run{time.Since(start), context.Cause(ctx)}
			return ctx.Err()
		}})
		first := enqueue(t, b, q, "worker's timeout")
		synctest.Wait()
		second := enqueue(t, b, q, "own timeout", claim.Timeout(2*time.Second))
		synctest.Wait()
		require.NoError(t, stop())
		r2, r1 := <-runs, <-runs // the shorter timeout ends first
		assert.Equal(t, 5*time.Second, r1.took)
		assert.Equal(t, 2*time.Second, r2.took)
		require.ErrorIs(t, r1.cause, context.DeadlineExceeded)
		for _, id := range []claim.ItemID{first.ID, second.ID} {
			got, _ := lookup(t, b, id)
			assert.Equal(t, claim.Dead, got.State)
			require.Len(t, got.History, 1)
			assert.Contains(t, got.History[0].Reason, "timed out after")
		}
	})
}

// TestWorkHonoursTheLargestItemTimeout: an item's Timeout of MaxTimeout
// overrides the Worker's, which would have cancelled the handler long
// before.
func TestWorkHonoursTheLargestItemTimeout(t *testing.T) {
	b, _, clk := newBroker(t)
	started, release := make(chan context.Context), make(chan struct{})
	stop := startWork(t, b, claim.Worker{Queue: q, Timeout: time.Second, Handler: func(ctx context.Context, c claim.Claim) error {
		started <- ctx
		<-release
		return ctx.Err()
	}})
	it := enqueue(t, b, q, "p", claim.Timeout(claim.MaxTimeout))
	require.Equal(t, claim.MaxTimeout, it.Timeout)
	hctx := <-started
	for range 120 { // heartbeats every 10s keep the claim
		clk.Advance(time.Second)
	}
	require.NoError(t, hctx.Err(), "the item's timeout, not the Worker's, bounds the handler")
	close(release)
	require.NoError(t, stop())
	assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q), "completed")
}

// countingStore counts the claims made through it.
type countingStore struct {
	claim.Store
	limits chan int
}

func (s *countingStore) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	cs, err := s.Store.Claim(ctx, req)
	if len(cs) > 0 {
		s.limits <- len(cs)
	}
	return cs, err
}

// TestWorkClaimsABatchPerRoundTrip: with 4 idle handlers and 8 items, Work
// fetches min(idle, BatchSize) items per claim.
func TestWorkClaimsABatchPerRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := lease.Must(lease.New())
		store := &countingStore{Store: lease.Must(claim.NewMemory(svc)), limits: make(chan int, 100)}
		b := lease.Must(claim.New(store))
		t.Cleanup(func() {
			require.NoError(t, b.Close())
			require.NoError(t, svc.Close())
		})
		_, err := b.EnqueueMany(ctx, []claim.NewItem{{Queue: q}, {Queue: q}, {Queue: q}, {Queue: q}, {Queue: q}, {Queue: q}, {Queue: q}, {Queue: q}})
		require.NoError(t, err)
		release := make(chan struct{})
		stop := startWork(t, b, claim.Worker{Queue: q, Concurrency: 4, BatchSize: 3, Handler: func(context.Context, claim.Claim) error {
			<-release
			return nil
		}})
		synctest.Wait()
		assert.Equal(t, 3, <-store.limits, "a batch of BatchSize")
		assert.Equal(t, 1, <-store.limits, "then the one idle handler left")
		assert.Empty(t, store.limits)
		close(release)
		synctest.Wait()
		require.NoError(t, stop())
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
	})
}

func TestEnqueueManyWithKeys(t *testing.T) {
	b, _, _ := newBroker(t, claim.WithMaxAttempts(4))
	old := enqueue(t, b, q, "old", claim.Key("a"))
	items, err := b.EnqueueMany(ctx, []claim.NewItem{
		{Queue: q, Payload: []byte("dup of old"), Key: "a"},
		{Queue: q, Payload: []byte("b"), Key: "b"},
		{Queue: q, Payload: []byte("dup of b"), Key: "b"},
		{Queue: "other", Payload: []byte("other a"), Key: "a", MaxAttempts: 2},
	})
	require.NoError(t, err)
	require.Len(t, items, 4)
	assert.Equal(t, old.ID, items[0].ID)
	assert.Equal(t, "old", string(items[0].Payload))
	assert.Equal(t, items[1].ID, items[2].ID, "a key earlier in the batch")
	assert.Equal(t, 4, items[1].MaxAttempts, "the Broker's default")
	assert.Equal(t, 2, items[3].MaxAttempts)
	assert.Equal(t, counts(2, 0, 0, 0), countsOf(t, b, q))

	_, err = b.EnqueueMany(ctx, []claim.NewItem{{Queue: q, Key: "c"}, {Queue: q, Priority: claim.MaxPriority + 1}})
	le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "items[1].priority", le.Field)
	assert.Equal(t, counts(2, 0, 0, 0), countsOf(t, b, q), "none stored")
}

// TestListPagesInIDOrder lists every state and one state, page by page.
func TestListPagesInIDOrder(t *testing.T) {
	b, _, _ := newBroker(t, claim.WithMaxAttempts(1))
	var ids []claim.ItemID
	for _, opt := range []claim.EnqueueOption{claim.Delay(time.Hour), claim.Priority(2), claim.Priority(0), claim.Priority(1)} {
		ids = append(ids, enqueue(t, b, q, "p", opt).ID)
	}
	enqueue(t, b, "other", "x")
	c := claimOne(t, b, q, "w") // ids[2]
	require.Equal(t, ids[2], c.Item)
	d := claimOne(t, b, q, "w") // ids[3]
	_, err := b.Fail(ctx, d, "x", time.Second, time.Second)
	require.NoError(t, err)

	var got []claim.ItemID
	var states []claim.State
	for after := claim.ItemID(0); ; {
		page, err := b.List(ctx, claim.Query{Queue: q, After: after, Limit: 3})
		require.NoError(t, err)
		if len(page) == 0 {
			break
		}
		for _, it := range page {
			got, states = append(got, it.ID), append(states, it.State)
		}
		after = page[len(page)-1].ID
	}
	assert.Equal(t, ids, got)
	assert.Equal(t, []claim.State{claim.Delayed, claim.Visible, claim.Claimed, claim.Dead}, states)
	claimed, err := b.List(ctx, claim.Query{Queue: q, State: claim.Claimed, Limit: 10})
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	assert.Equal(t, ids[2], claimed[0].ID)
	none, err := b.List(ctx, claim.Query{Queue: "unknown", Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestListLookupCountsErrors(t *testing.T) {
	b, _, _ := newBroker(t)
	for _, tc := range []struct {
		field string
		q     claim.Query
	}{
		{"queue", claim.Query{Limit: 1}},
		{"limit", claim.Query{Queue: q}},
		{"state", claim.Query{Queue: q, State: claim.Cancelled + 1, Limit: 1}},
	} {
		_, err := b.List(ctx, tc.q)
		le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
		assert.Equal(t, tc.field, le.Field)
	}
	_, err := b.Counts(ctx, "")
	assert.Equal(t, "queue", requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument).Field)
	_, err = b.Lookup(ctx, 42)
	require.ErrorIs(t, err, claim.ErrNotFound)
	assert.Equal(t, "claim: lookup item 42: no such item [LS_NOT_FOUND]", err.Error())
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = b.Counts(done, q)
	require.ErrorIs(t, err, context.Canceled)
	_, err = b.Lookup(done, 1)
	require.ErrorIs(t, err, context.Canceled)
}

// TestWorkClaimLostBeforeItsJobExistsIsNotRun: the claim's lease expires
// while Claim is granting it (the audit sink, which runs inside the grant,
// moves the clock past its TTL), so the store reports it lost before Work
// has made its job. The handler is not run on it; the item, back in the
// queue, is claimed again and handled then.
func TestWorkClaimLostBeforeItsJobExistsIsNotRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := leasetest.NewFakeClock(t0)
		var grants int
		svc := lease.Must(lease.New(lease.WithClock(clk), lease.WithAuditObserver(lease.ObserverFunc[lease.Decision](func(d lease.Decision) {
			if d.Action == lease.ActionGrant {
				grants++
				if grants == 1 {
					clk.Advance(ttl)
				}
			}
		}))))
		b := newBrokerOn(t, svc)
		attempts := make(chan int, 2)
		stop := startWork(t, b, claim.Worker{Queue: q, LeaseDuration: ttl, Handler: func(_ context.Context, c claim.Claim) error {
			attempts <- c.Attempt
			return nil
		}})
		it := enqueue(t, b, q, "p")
		synctest.Wait()
		require.NoError(t, stop())
		require.Len(t, attempts, 1, "run once, on the second claim")
		assert.Equal(t, 2, <-attempts)
		_, ok := lookup(t, b, it.ID)
		assert.False(t, ok, "completed")
	})
}

// TestMemoryChecksItsOwnInput: a Memory used without a Broker refuses bad
// input itself, naming the field, and changes nothing.
func TestMemoryChecksItsOwnInput(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(clk)))
	m := lease.Must(claim.NewMemory(svc))
	t.Cleanup(func() {
		require.NoError(t, m.Close())
		require.NoError(t, svc.Close())
	})
	_, err := m.Enqueue(ctx, []claim.NewItem{{Queue: q, MaxAttempts: 1}})
	require.NoError(t, err)
	cs, err := m.Claim(ctx, claim.ClaimRequest{Queue: q, Owner: "w", Limit: 1, Lease: ttl})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	ref := cs[0].Ref
	for _, tc := range []struct {
		field string
		call  func() error
	}{
		{"items[0].max_attempts", func() error { _, err := m.Enqueue(ctx, []claim.NewItem{{Queue: q}}); return err }},
		{"limit", func() error {
			_, err := m.Claim(ctx, claim.ClaimRequest{Queue: q, Owner: "w", Lease: ttl})
			return err
		}},
		{"ref", func() error { _, err := m.Extend(ctx, claim.Ref{}, ttl); return err }},
		// A live claim's token without its item names no claim, as in
		// every store.
		{"ref", func() error { _, err := m.Extend(ctx, claim.Ref{Token: ref.Token}, ttl); return err }},
		{"ref", func() error {
			return m.Settle(ctx, claim.Settlement{Ref: claim.Ref{Token: ref.Token}, How: claim.SettleComplete})
		}},
		{"lease_duration", func() error { _, err := m.Extend(ctx, ref, 0); return err }},
		{"how", func() error { return m.Settle(ctx, claim.Settlement{Ref: ref}) }},
		{"after", func() error { return m.Settle(ctx, claim.Settlement{Ref: ref, How: claim.SettleRetry, After: -1}) }},
		{"state", func() error { _, err := m.List(ctx, claim.Query{Queue: q, State: 9, Limit: 1}); return err }},
	} {
		le := requireCode(t, tc.call(), lease.CodeInvalidArgument, lease.ErrInvalidArgument)
		assert.Equal(t, tc.field, le.Field)
	}
	got, err := m.Counts(ctx, q)
	require.NoError(t, err)
	assert.Equal(t, counts(0, 0, 1, 0), got)
	require.NoError(t, m.Settle(ctx, claim.Settlement{Ref: ref, How: claim.SettleDead, Reason: "x"}))
	got, err = m.Counts(ctx, q)
	require.NoError(t, err)
	assert.Equal(t, counts(0, 0, 0, 1), got)
}

// TestMemoryNotify: the channel is closed by an enqueue to its queue, and
// at once once the Memory is closed.
func TestMemoryNotify(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(clk)))
	m := lease.Must(claim.NewMemory(svc))
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	ready, stop := m.Notify(q)
	other, stopOther := m.Notify("other")
	_, err := m.Enqueue(ctx, []claim.NewItem{{Queue: q, MaxAttempts: 1}})
	require.NoError(t, err)
	<-ready
	select {
	case <-other:
		require.FailNow(t, "another queue's enqueue woke it")
	default:
	}
	stop()
	stop() // idempotent
	require.NoError(t, m.Close())
	<-other
	stopOther()
	closed, stopClosed := m.Notify(q)
	<-closed
	stopClosed()
}

// flakyStore fails its first claims with an error that may pass.
type flakyStore struct {
	claim.Store
	fails int
	calls chan struct{}
}

var errFlaky = errors.New("connection reset")

func (s *flakyStore) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	s.calls <- struct{}{}
	if s.fails > 0 {
		s.fails--
		return nil, errFlaky
	}
	return s.Store.Claim(ctx, req)
}

// TestWorkRetriesAClaimThatFailed: a claim error other than a closed store
// or bad input is retried after a backoff on the Broker's clock, and Work
// goes on.
func TestWorkRetriesAClaimThatFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := leasetest.NewFakeClock(t0)
		svc := lease.Must(lease.New(lease.WithClock(clk)))
		store := &flakyStore{Store: lease.Must(claim.NewMemory(svc)), fails: 2, calls: make(chan struct{}, 100)}
		b := lease.Must(claim.New(store, lease.WithClock(clk))) // the wrapper hides Memory's Clock
		t.Cleanup(func() {
			require.NoError(t, b.Close())
			require.NoError(t, svc.Close())
		})
		enqueue(t, b, q, "p")
		handled := make(chan struct{}, 1)
		stop := startWork(t, b, claim.Worker{Queue: q, Handler: func(context.Context, claim.Claim) error {
			handled <- struct{}{}
			return nil
		}})
		synctest.Wait()
		require.Len(t, store.calls, 1, "failed once, waiting to retry")
		clk.Advance(100*time.Millisecond - 1)
		synctest.Wait()
		require.Len(t, store.calls, 1)
		clk.Advance(1)
		synctest.Wait()
		require.Len(t, store.calls, 2, "retried after 100ms, failed again")
		clk.Advance(200 * time.Millisecond)
		synctest.Wait()
		require.Len(t, handled, 1, "the third claim got the item")
		require.NoError(t, stop())
	})
}

// slowSettleStore is a store whose Settle waits until released, as a
// commit across a network does.
type slowSettleStore struct {
	claim.Store
	release chan struct{}
}

func (s *slowSettleStore) Settle(ctx context.Context, st claim.Settlement) error {
	<-s.release
	return s.Store.Settle(ctx, st)
}

// A handler's slot takes the next item while the last one is settled: a
// slow commit does not idle the handlers.
func TestWorkHandlesTheNextItemWhileSettling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := lease.Must(lease.New())
		store := &slowSettleStore{Store: lease.Must(claim.NewMemory(svc)), release: make(chan struct{})}
		b := lease.Must(claim.New(store))
		t.Cleanup(func() {
			require.NoError(t, b.Close())
			require.NoError(t, svc.Close())
		})
		enqueue(t, b, q, "first")
		enqueue(t, b, q, "second")
		var handled []string
		stop := startWork(t, b, claim.Worker{Queue: q, Concurrency: 1, Handler: func(_ context.Context, c claim.Claim) error {
			handled = append(handled, string(c.Payload))
			return nil
		}})
		synctest.Wait()
		assert.Equal(t, []string{"first", "second"}, handled, "both ran, the first still settling")
		assert.Equal(t, counts(0, 0, 2, 0), countsOf(t, b, q))
		close(store.release)
		synctest.Wait()
		require.NoError(t, stop())
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
	})
}
