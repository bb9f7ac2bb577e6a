package electiontest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
	"github.com/leasehold/lease/lock/lockprovider"
)

// requireInvalid asserts err is bad input naming field.
func requireInvalid(e *env, err error, field, what string) {
	e.Helper()
	require.ErrorIs(e, err, lease.ErrInvalidArgument, what)
	var le *lease.Error
	require.ErrorAs(e, err, &le, what)
	assert.Equal(e, field, le.Field, "%s: %v", what, err)
}

// testBadConfiguration: New refuses a provider that cannot run an
// election and a schedule that cannot hold a lease, naming the culprit;
// the operations refuse bad input, and a refused call changes nothing.
func testBadConfiguration(e *env) {
	_, err := election.New(nil, electionName)
	requireInvalid(e, err, "provider", "nil provider")
	_, err = election.New(struct{ lock.Provider }{e.inner}, electionName)
	requireInvalid(e, err, "provider", "a provider that is neither a Waiter nor an Inspector")
	_, err = election.New(e.p, "", e.options(e.long)...)
	requireInvalid(e, err, "name", "empty name")

	d := e.long
	cases := []struct {
		what  string
		field string
		opt   election.Option
	}{
		{"zero lease", "WithLeaseDuration", election.WithLeaseDuration(0)},
		{"lease whose third is zero", "WithLeaseDuration", election.WithLeaseDuration(2)},
		{"negative margin", "WithSafetyMargin", election.WithSafetyMargin(-1)},
		{"margin past the first renewal", "WithSafetyMargin", election.WithSafetyMargin(d - d/3)},
		{"zero retry", "WithRetryInterval", election.WithRetryInterval(0)},
		{"retry that cannot land", "WithRetryInterval", election.WithRetryInterval(d)},
		{"zero poll", "WithPollInterval", election.WithPollInterval(0)},
	}
	for _, c := range cases {
		_, err := election.New(e.p, electionName, e.options(d, c.opt)...)
		requireInvalid(e, err, c.field, c.what)
	}
	if _, ok := e.inner.(lockprovider.TimeBase); ok {
		_, err := election.New(e.p, electionName, e.options(d, lease.WithClock(lease.SystemClock()))...)
		requireInvalid(e, err, "WithClock", "a second clock for a provider with a time base")
	}

	el := e.election(e.long)
	var nilCtx context.Context
	_, err = el.Campaign(nilCtx, nil)
	requireInvalid(e, err, "ctx", "Campaign with a nil ctx")
	_, err = el.Campaign(background, make([]byte, election.MaxCandidateValueSize+1))
	requireInvalid(e, err, "value", "Campaign with a value over MaxCandidateValueSize")
	err = el.Run(background, make([]byte, election.MaxCandidateValueSize+1), election.Callbacks{})
	requireInvalid(e, err, "value", "Run with a value over MaxCandidateValueSize")
	err = el.Run(nilCtx, nil, election.Callbacks{})
	requireInvalid(e, err, "ctx", "Run with a nil ctx")
	_, err = el.Leader(nilCtx)
	requireInvalid(e, err, "ctx", "Leader with a nil ctx")
	_, err = el.Observe(nilCtx)
	requireInvalid(e, err, "ctx", "Observe with a nil ctx")
	_, err = el.Leader(background)
	require.ErrorIs(e, err, election.ErrNoLeader, "a refused campaign leads nothing")

	// The largest value is fine.
	big := string(make([]byte, election.MaxCandidateValueSize))
	ld := e.campaign(el, big)
	l, err := el.Leader(background)
	require.NoError(e, err)
	assert.Equal(e, []byte(big), l.Value)
	require.NoError(e, ld.Resign(background))
}

// testCampaignBlocks: a campaign waits while another candidate leads, and
// wins, with a greater token, once the leader resigns.
func testCampaignBlocks(e *env) {
	el := e.election(e.long)
	a := e.campaign(el, "a")
	ch := e.campaignAsync(el, "b")
	e.stillWaiting(ch, "while a leads")
	l, err := el.Leader(background)
	require.NoError(e, err)
	assert.Equal(e, []byte("a"), l.Value, "a still leads")
	e.advance(e.long / 2) // a renews; b keeps waiting
	e.stillWaiting(ch, "while a leads and renews")
	require.NoError(e, a.Context().Err(), "a leads through its renewals")

	require.NoError(e, a.Resign(background))
	b := e.won(ch, "b")
	assert.Greater(e, b.Token(), a.Token(), "the new leader's token")
	assert.ErrorIs(e, context.Cause(a.Context()), election.ErrResigned)
	require.NoError(e, b.Context().Err())
}

// testResignHandsOver: a resignation hands the leadership to a waiting
// candidate at once: on a fake clock without time passing, on a real one
// long before the resigned lease would have expired.
func testResignHandsOver(e *env) {
	el := e.election(e.long)
	a := e.campaign(el, "a")
	ch := e.campaignAsync(el, "b")
	e.stillWaiting(ch, "while a leads")
	before := e.clock.Now()
	require.NoError(e, a.Resign(background))
	b := e.won(ch, "b")
	if e.fake() {
		assert.Equal(e, before, e.clock.Now(), "no time passed")
	} else {
		assert.Less(e, time.Since(before), e.long/2, "the hand-off did not wait for the lease")
	}
	assert.Greater(e, b.Token(), a.Token())
	require.NoError(e, a.Resign(background), "Resign is idempotent")
}

// testLeaderReportsValue: Leader says nobody leads, then who does, with
// the leader's value and token, as the caller's own copy.
func testLeaderReportsValue(e *env) {
	el := e.election(e.long)
	_, err := el.Leader(background)
	require.ErrorIs(e, err, election.ErrNoLeader)

	a := e.campaign(el, "alpha")
	assert.Equal(e, []byte("alpha"), a.Value())
	l, err := el.Leader(background)
	require.NoError(e, err)
	assert.Equal(e, []byte("alpha"), l.Value)
	assert.Equal(e, a.Token(), l.Token)
	assert.True(e, l.ExpiresAt.After(e.clock.Now().Add(-time.Second)), "ExpiresAt %v is in the future", l.ExpiresAt)
	l.Value[0] = 'X'
	again, err := el.Leader(background)
	require.NoError(e, err)
	assert.Equal(e, []byte("alpha"), again.Value, "Leader's value is the caller's copy")
	v := a.Value()
	v[0] = 'X'
	assert.Equal(e, []byte("alpha"), a.Value(), "Value is the caller's copy")

	require.NoError(e, a.Resign(background))
	_, err = el.Leader(background)
	require.ErrorIs(e, err, election.ErrNoLeader, "after the resignation")

	b := e.campaign(el, "")
	l, err = el.Leader(background)
	require.NoError(e, err)
	assert.Nil(e, l.Value, "a candidate without a value")
	assert.Equal(e, b.Token(), l.Token)
}

// next returns the next leader ch delivers: on a fake clock after one poll
// interval, which runs the poll inside Advance.
func (e *env) next(ch <-chan election.Leader, what string) election.Leader {
	e.Helper()
	e.advance(e.poll)
	l, ok := <-chanOrTimeout(e, ch, what)
	require.True(e, ok, "%s: the channel closed", what)
	return l
}

// chanOrTimeout returns a channel with what ch delivers next, failing the
// clause after waitLimit.
func chanOrTimeout(e *env, ch <-chan election.Leader, what string) <-chan election.Leader {
	e.Helper()
	out := make(chan election.Leader, 1)
	select {
	case l, ok := <-ch:
		if ok {
			out <- l
		}
		close(out)
	case <-time.After(waitLimit):
		e.Fatalf("%s: no leader observed within %v", what, waitLimit)
	}
	return out
}

// closed waits for ch to close, failing the clause after waitLimit.
func (e *env) closed(ch <-chan election.Leader) {
	e.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			e.Fatalf("Observe's channel did not close within %v of its context's end", waitLimit)
		}
	}
}

// testObserveInOrder: Observe reports the leader when it starts, then each
// new leader, in order of their tokens, and closes its channel when its
// context ends.
func testObserveInOrder(e *env) {
	el := e.election(e.long)
	ctx, cancel := context.WithCancel(background)
	defer cancel()
	ch, err := el.Observe(ctx)
	require.NoError(e, err)

	a := e.campaign(el, "a")
	got := e.next(ch, "the first leader")
	assert.Equal(e, []byte("a"), got.Value)
	assert.Equal(e, a.Token(), got.Token)

	prev := a
	for _, v := range []string{"b", "c", "a"} {
		w := e.campaignAsync(el, v)
		require.NoError(e, prev.Resign(background))
		ld := e.won(w, v)
		got := e.next(ch, "leader "+v)
		assert.Equal(e, []byte(v), got.Value)
		assert.Equal(e, ld.Token(), got.Token, "the leader observed is the one that won")
		prev = ld
	}
	cancel()
	e.closed(ch)

	// Observing an election that already has a leader reports it at once.
	ctx2, cancel2 := context.WithCancel(background)
	ch2, err := el.Observe(ctx2)
	require.NoError(e, err)
	first := <-chanOrTimeout(e, ch2, "the current leader")
	assert.Equal(e, prev.Token(), first.Token)
	cancel2()
	e.closed(ch2)
}

// testObserveCoalesces: a reader that falls behind gets the latest leader,
// never an older one after it: the channel does not block the election.
// Only a fake clock can make sure every leader was polled.
func testObserveCoalesces(e *env) {
	if !e.fake() {
		e.Skip("electiontest: needs a fake clock to know that every leader was polled")
	}
	el := e.election(e.long)
	ctx, cancel := context.WithCancel(background)
	defer cancel()
	ch, err := el.Observe(ctx)
	require.NoError(e, err)
	var last *election.Leadership
	for i := range 5 {
		if last != nil {
			require.NoError(e, last.Resign(background))
		}
		last = e.campaign(el, strconv.Itoa(i))
		e.advance(e.poll) // polled, and queued for a reader who is not reading
	}
	got := <-chanOrTimeout(e, ch, "the latest leader")
	assert.Equal(e, last.Token(), got.Token, "the latest leader, the others coalesced")
	select {
	case l := <-ch:
		e.Fatalf("a second leader %+v was queued", l)
	default:
	}
	cancel()
	e.closed(ch)
}

// testExpiredLease: a leader cut off from the provider (its renewals and
// its release fail) loses its leadership by its safety deadline, before
// its lease ends, and a waiting candidate leads once the lease has
// expired, not before.
func testExpiredLease(e *env) {
	el := e.election(e.short)
	a := e.campaign(el, "a")
	l, err := el.Leader(background)
	require.NoError(e, err)
	w := e.campaignAsync(el, "b")
	e.f.renew.Store(true)
	e.f.release.Store(true)

	margin := e.short / 10
	e.advance(e.short - margin) // the safety deadline
	e.ended(a.Context(), "a's leadership")
	assert.ErrorIs(e, context.Cause(a.Context()), election.ErrLeadershipLost)
	if e.fake() {
		e.stillWaiting(w, "a's lease has not expired yet")
		assert.True(e, e.clock.Now().Before(l.ExpiresAt), "a lost its leadership before its lease ended")
	}
	e.f.release.Store(false)
	e.f.renew.Store(false)
	e.advance(margin)
	b := e.won(w, "b")
	assert.Greater(e, b.Token(), a.Token())
	if e.fake() {
		assert.False(e, e.clock.Now().Before(l.ExpiresAt), "b led before a's lease expired")
	}
}

// testOneLeader: candidates that campaign and resign in a loop never lead
// two at a time, and Leader names the one that does.
func testOneLeader(e *env) {
	const candidates = 4
	rounds := e.scale(25, 5)
	el := e.election(e.long)
	var leading, most atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 2*candidates*rounds)
	for c := range candidates {
		wg.Go(func() {
			for range rounds {
				ld, err := el.Campaign(background, []byte(strconv.Itoa(c)))
				if err != nil {
					errs <- err
					return
				}
				n := leading.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				l, err := el.Leader(background)
				if err == nil && l.Token != ld.Token() {
					err = fmt.Errorf("the leader reported has token %d, the leader has %d", l.Token, ld.Token())
				}
				if err != nil {
					errs <- err
				}
				leading.Add(-1)
				if err := ld.Resign(background); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(e, err)
	}
	assert.Equal(e, int32(1), most.Load(), "candidates leading at once")
}

// testFailingRenewals: a leader whose renewals fail stops leading: the
// context OnStartedLeading got ends with ErrLeadershipLost, then
// OnStoppedLeading runs; Run goes on until its context ends.
func testFailingRenewals(e *env) {
	el := e.election(e.short)
	c := newCallbacks()
	done, cancel := e.run(el, "a", c)
	ctx := c.leadership(e, "OnStartedLeading").Context()
	e.f.renew.Store(true)
	e.advance(e.short)
	e.ended(ctx, "the leader's context")
	assert.ErrorIs(e, context.Cause(ctx), election.ErrLeadershipLost)
	receive(e, c.stopped, "OnStoppedLeading")
	e.f.renew.Store(false)
	cancel()
	assert.ErrorIs(e, receive(e, done, "Run's return"), context.Canceled)
}

// testReleaseOnCancel: cancelling the leader's Run releases the lock at
// once, so a waiting candidate leads long before the lease would have
// expired; Run returns after OnStoppedLeading.
func testReleaseOnCancel(e *env) {
	el := e.election(e.long)
	c := newCallbacks()
	done, cancel := e.run(el, "a", c)
	ld := c.leadership(e, "OnStartedLeading")
	ctx := ld.Context()
	l, err := el.Leader(background)
	require.NoError(e, err)
	assert.Equal(e, l.Token, ld.Token(), "OnStartedLeading's leadership is the leader's")
	w := e.campaignAsync(el, "b")
	e.stillWaiting(w, "while a leads")
	before := e.clock.Now()
	cancel()
	b := e.won(w, "b")
	if e.fake() {
		assert.Equal(e, before, e.clock.Now(), "no time passed")
	} else {
		assert.Less(e, time.Since(before), e.long/2, "b did not wait for a's lease")
	}
	assert.Greater(e, b.Token(), l.Token)
	assert.ErrorIs(e, context.Cause(ctx), context.Canceled)
	assert.ErrorIs(e, receive(e, done, "Run's return"), context.Canceled)
	select {
	case <-c.stopped:
	default:
		e.Fatal("Run returned before OnStoppedLeading")
	}
}

// testFollowersHear: a candidate that does not lead hears of the leader
// through OnNewLeader, and of itself when it takes over.
func testFollowersHear(e *env) {
	el := e.election(e.long)
	ca := newCallbacks()
	_, cancelA := e.run(el, "a", ca)
	ca.leadership(e, "a's OnStartedLeading")

	cb := newCallbacks()
	_, cancelB := e.run(el, "b", cb)
	receive(e, cb.newLead, "b's OnNewLeader for a")
	seen := cb.seen()
	require.Len(e, seen, 1)
	assert.Equal(e, []byte("a"), seen[0].Value, "b hears that a leads")

	cancelA()
	cb.leadership(e, "b's OnStartedLeading")
	e.advance(e.poll)
	receive(e, cb.newLead, "b's OnNewLeader for b")
	seen = cb.seen()
	require.Len(e, seen, 2)
	assert.Equal(e, []byte("b"), seen[1].Value, "b hears that it leads")
	assert.Greater(e, seen[1].Token, seen[0].Token)
	cancelB()
}
