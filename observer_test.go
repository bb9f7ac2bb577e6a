package lease_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// events records what an observer is told, safe for concurrent use.
type events struct {
	mu  sync.Mutex
	got []lease.Event
}

func (r *events) Observe(e lease.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, e)
}

func (r *events) all() []lease.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]lease.Event(nil), r.got...)
}

func (r *events) kinds() []lease.EventKind {
	var out []lease.EventKind
	for _, e := range r.all() {
		out = append(out, e.Kind)
	}
	return out
}

// lateClock fires every timer a second late, as a stalled process would.
type lateClock struct{ *leasetest.FakeClock }

func (c lateClock) AfterFunc(d time.Duration, f func()) lease.Timer {
	return c.FakeClock.AfterFunc(d+time.Second, f)
}

func TestObserverSeesGrantsRenewalsEndsAndDenials(t *testing.T) {
	rec := &events{}
	fake := leasetest.NewFakeClock(t0)
	s := lease.Must(lease.New(lease.WithClock(lateClock{fake}), lease.WithObserver(rec)))
	t.Cleanup(func() { require.NoError(t, s.Close()) })

	a := grant(t, s, lease.Operation, 10*time.Second)
	b := grant(t, s, lease.StateWrite, 5*time.Second)
	_, err := s.Use(ctx, a.ID, lease.Operation) // allowed Use: no event
	require.NoError(t, err)
	_, err = s.Use(ctx, a.ID, lease.StateWrite)
	requireCode(t, err, lease.CodePurposeMismatch, lease.ErrPurposeMismatch)
	_, err = s.Renew(ctx, a.ID)
	require.NoError(t, err)
	_, err = s.Revoke(ctx, a.ID)
	require.NoError(t, err)
	fake.Advance(6 * time.Second) // b expires at 5s, its timer fires at 6s

	got := rec.all()
	require.Equal(t, []lease.EventKind{lease.EventGranted, lease.EventGranted, lease.EventDenied,
		lease.EventRenewed, lease.EventEnded, lease.EventEnded}, rec.kinds())
	assert.Equal(t, lease.Event{Kind: lease.EventGranted, LeaseID: a.ID, Holder: "holder",
		Purpose: lease.Operation, Action: lease.ActionGrant, At: t0}, got[0])
	assert.Equal(t, lease.StateWrite, got[1].Purpose)
	assert.Equal(t, lease.CodePurposeMismatch, got[2].Code)
	assert.Equal(t, lease.Operation, got[2].Purpose)
	assert.Equal(t, lease.ActionUse, got[2].Action)
	assert.Equal(t, lease.EndRevoked, got[4].Reason)
	assert.Zero(t, got[4].Lag)
	assert.Equal(t, lease.Event{Kind: lease.EventEnded, LeaseID: b.ID, Holder: "holder", Purpose: lease.StateWrite,
		Action: lease.ActionExpire, Reason: lease.EndExpired, Lag: time.Second, At: b.ExpiresAt}, got[5])
	assert.Equal(t, "ended", got[5].Kind.String())
}

func TestObserverBufferIsBoundedAndDropsAreReported(t *testing.T) {
	rec := &events{}
	sink := newBlockingObserver() // blocks the audit sink
	s, _ := newService(t, lease.WithObserver(rec), auditFunc(func(lease.Decision) { sink.Observe(lease.Event{}) }), lease.WithObserverBuffer(2))

	first := grantBehind(t, s, sink) // delivers, and blocks in the sink
	// Queued behind the blocked sink: the second grant's decision fits, the
	// next two are dropped; the observer's buffer takes two events.
	for range 3 {
		grant(t, s, lease.Operation, time.Minute)
	}
	close(sink.release)
	<-first
	assert.Equal(t, uint64(2), s.DroppedDecisions())
	grant(t, s, lease.Operation, time.Minute) // reports both kinds of drops; no room left for itself
	grant(t, s, lease.Operation, time.Minute)

	got := rec.all()
	require.Equal(t, []lease.EventKind{lease.EventGranted, lease.EventGranted, lease.EventGranted,
		lease.EventEventsDropped, lease.EventDecisionsDropped, lease.EventEventsDropped, lease.EventGranted}, rec.kinds())
	assert.Equal(t, uint64(2), got[3].Count) // the fourth grant and its report of dropped decisions
	assert.Equal(t, uint64(2), got[4].Count)
	assert.Equal(t, uint64(1), got[5].Count) // the fifth grant
	assert.Equal(t, lease.ID(6), got[6].LeaseID)
}

func TestObserverPanicIsReportedAndNothingRunsAfterClose(t *testing.T) {
	var panics []*lease.PanicError
	calls := 0
	obs := lease.ObserverFunc[lease.Event](func(lease.Event) { calls++; panic("boom") })
	s, _ := newService(t, lease.WithObserver(obs),
		lease.WithPanicHandler(func(p *lease.PanicError) { panics = append(panics, p) }))
	grant(t, s, lease.Operation, time.Minute)
	require.Len(t, panics, 1)
	assert.Equal(t, "observer", panics[0].Callback)
	require.NoError(t, s.Close())
	_, err := s.Grant(ctx, "h", lease.Operation, time.Minute)
	require.Error(t, err)
	assert.Equal(t, 1, calls)
}

func TestEventKindString(t *testing.T) {
	assert.Equal(t, "EventKind(9)", lease.EventKind(9).String())
}

// blockingObserver records events and blocks in the first one until
// released, so that a test can queue events behind a slow observer.
type blockingObserver struct {
	events
	once             sync.Once
	entered, release chan struct{}
}

func newBlockingObserver() *blockingObserver {
	return &blockingObserver{entered: make(chan struct{}), release: make(chan struct{})}
}

func (o *blockingObserver) Observe(e lease.Event) {
	o.once.Do(func() { close(o.entered); <-o.release })
	o.events.Observe(e)
}

// grantBehind grants from another goroutine, whose delivery then blocks in
// o, and returns a channel closed once that grant has returned.
func grantBehind(t *testing.T, s *lease.Service, o *blockingObserver) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := s.Grant(ctx, "holder", lease.Operation, time.Minute)
		assert.NoError(t, err)
	}()
	<-o.entered
	return done
}

func TestObserverBufferCountsTheEventsWaitingBehindASlowObserver(t *testing.T) {
	obs := newBlockingObserver()
	s, _ := newService(t, lease.WithObserver(obs), lease.WithObserverBuffer(4))
	first := grantBehind(t, s, obs)
	// The event being observed holds one place until the call returns:
	// three more fit, seven are dropped.
	for range 10 {
		grant(t, s, lease.Operation, time.Minute)
	}
	close(obs.release)
	<-first
	last := grant(t, s, lease.Operation, time.Minute)

	got := obs.all()
	require.Equal(t, []lease.EventKind{lease.EventGranted, lease.EventGranted, lease.EventGranted,
		lease.EventGranted, lease.EventEventsDropped, lease.EventGranted}, obs.kinds())
	for i, id := range []lease.ID{1, 2, 3, 4} {
		assert.Equal(t, id, got[i].LeaseID)
	}
	assert.Equal(t, uint64(7), got[4].Count)
	assert.Zero(t, got[4].LeaseID)
	assert.True(t, got[4].At.IsZero())
	assert.Equal(t, last.ID, got[5].LeaseID)
}

// With a buffer of one, the report of drops must still leave room for the
// events after it: otherwise, after one drop, the observer hears nothing
// again.
func TestObserverBufferOfOneRecoversAfterDrops(t *testing.T) {
	obs := newBlockingObserver()
	s, _ := newService(t, lease.WithObserver(obs), lease.WithObserverBuffer(1))
	first := grantBehind(t, s, obs)
	grant(t, s, lease.Operation, time.Minute) // dropped: the buffer holds the event being observed
	grant(t, s, lease.Operation, time.Minute) // dropped
	close(obs.release)
	<-first
	fourth := grant(t, s, lease.Operation, time.Minute)
	fifth := grant(t, s, lease.Operation, time.Minute)

	got := obs.all()
	require.Equal(t, []lease.EventKind{lease.EventGranted, lease.EventEventsDropped,
		lease.EventGranted, lease.EventGranted}, obs.kinds())
	assert.Equal(t, uint64(2), got[1].Count)
	assert.Equal(t, fourth.ID, got[2].LeaseID)
	assert.Equal(t, fifth.ID, got[3].LeaseID)
}

// Events from many goroutines reach the observer in decision order, each
// just before the same decision reaches the audit sink.
func TestObserverOrderAcrossConcurrentProducers(t *testing.T) {
	var mu sync.Mutex
	var log []string
	add := func(who string, action lease.Action, id lease.ID) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, who+" "+string(action)+" "+strconv.FormatUint(uint64(id), 10))
	}
	s, _ := newService(t,
		lease.WithObserver(lease.ObserverFunc[lease.Event](func(e lease.Event) { add("observer", e.Action, e.LeaseID) })),
		auditFunc(func(d lease.Decision) { add("sink", d.Action, d.LeaseID) }))
	const workers, rounds = 4, 100
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				l, err := s.Grant(ctx, "holder", lease.Operation, time.Minute)
				if !assert.NoError(t, err) {
					return
				}
				_, err = s.Use(ctx, l.ID, lease.StateWrite) // denied: an event too
				assert.ErrorIs(t, err, lease.ErrPurposeMismatch)
				_, err = s.Revoke(ctx, l.ID)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, log, 2*3*workers*rounds)
	lastGrant := uint64(0)
	state := map[string]string{} // lease ID: its last action
	next := map[string]string{"": "grant", "grant": "use", "use": "revoke"}
	for i := 0; i < len(log); i += 2 {
		who, decision, _ := strings.Cut(log[i], " ")
		require.Equal(t, "observer", who, "entry %d: %s", i, log[i])
		require.Equal(t, "sink "+decision, log[i+1], "the sink sees the same decision right after")
		action, id, _ := strings.Cut(decision, " ")
		require.Equal(t, next[state[id]], action, "lease %s", id)
		state[id] = action
		if action == "grant" {
			n, err := strconv.ParseUint(id, 10, 64)
			require.NoError(t, err)
			require.Greater(t, n, lastGrant, "grants in the order their IDs were issued")
			lastGrant = n
		}
	}
}

// Expiries settled together are delivered as one run; a panic in the
// middle of it is reported and the rest of the run is still delivered.
func TestObserverPanicInTheMiddleOfARun(t *testing.T) {
	var panics []*lease.PanicError
	rec := &events{}
	obs := lease.ObserverFunc[lease.Event](func(e lease.Event) {
		rec.Observe(e)
		if e.Kind == lease.EventEnded && e.LeaseID == 2 {
			panic("boom")
		}
	})
	s, clk := newService(t, lease.WithObserver(obs),
		lease.WithPanicHandler(func(p *lease.PanicError) { panics = append(panics, p) }))
	for range 3 {
		grant(t, s, lease.Operation, time.Second)
	}
	clk.Advance(time.Second)
	l := grant(t, s, lease.Operation, time.Second)

	var ended []lease.ID
	for _, e := range rec.all() {
		if e.Kind == lease.EventEnded {
			ended = append(ended, e.LeaseID)
		}
	}
	assert.Equal(t, []lease.ID{1, 2, 3}, ended)
	assert.Equal(t, l.ID, rec.all()[len(rec.all())-1].LeaseID, "delivery goes on after the panic")
	require.Len(t, panics, 1)
	assert.Equal(t, "observer", panics[0].Callback)
	assert.Equal(t, "boom", panics[0].Value)
}

// An observer that closes the service stops the run it is in: nothing
// queued is observed after Close, nor given to the sink or subscribers.
func TestObserverNothingDeliveredAfterCloseInTheMiddleOfARun(t *testing.T) {
	var s *lease.Service
	rec := &events{}
	sinkAfterClose := 0
	s, clk := newService(t,
		lease.WithObserver(lease.ObserverFunc[lease.Event](func(e lease.Event) {
			rec.Observe(e)
			if e.Kind == lease.EventEnded {
				assert.NoError(t, s.Close())
			}
		})),
		auditFunc(func(lease.Decision) {
			select {
			case <-s.Done():
				sinkAfterClose++
			default:
			}
		}))
	ended := 0
	stop := s.OnEnd(func(lease.Lease, lease.EndReason) { ended++ })
	defer stop()
	for range 3 {
		grant(t, s, lease.Operation, time.Second)
	}
	clk.Advance(time.Second)

	kinds := rec.kinds()
	assert.Equal(t, []lease.EventKind{lease.EventGranted, lease.EventGranted, lease.EventGranted, lease.EventEnded}, kinds)
	assert.Zero(t, sinkAfterClose)
	assert.Zero(t, ended)
}

// Close from another goroutine while the observer is slow: what was
// queued behind it is never delivered.
func TestObserverQueuedEventsAreDroppedByClose(t *testing.T) {
	obs := newBlockingObserver()
	s, _ := newService(t, lease.WithObserver(obs))
	first := grantBehind(t, s, obs)
	grant(t, s, lease.Operation, time.Minute) // queued behind the blocked observer
	require.NoError(t, s.Close())
	close(obs.release)
	<-first
	assert.Equal(t, []lease.EventKind{lease.EventGranted}, obs.kinds())
}

// An observer may call back into the service: the events its calls cause
// are delivered after the one it is observing, in decision order, by the
// same delivery.
func TestObserverMayCallBack(t *testing.T) {
	var s *lease.Service
	rec := &events{}
	s, _ = newService(t, lease.WithObserver(lease.ObserverFunc[lease.Event](func(e lease.Event) {
		rec.Observe(e)
		if e.Kind == lease.EventGranted && e.LeaseID == 1 {
			l, err := s.Grant(ctx, "inner", lease.Operation, time.Minute)
			require.NoError(t, err)
			_, err = s.Revoke(ctx, l.ID)
			require.NoError(t, err)
			assert.Len(t, rec.all(), 1, "nothing is delivered inside the observer's own call")
		}
	})))
	grant(t, s, lease.Operation, time.Minute)
	got := rec.all()
	require.Equal(t, []lease.EventKind{lease.EventGranted, lease.EventGranted, lease.EventEnded}, rec.kinds())
	assert.Equal(t, lease.ID(2), got[1].LeaseID)
	assert.Equal(t, "inner", got[1].Holder)
	assert.Equal(t, lease.ID(2), got[2].LeaseID)
}

// inSet reports whether WithObserverOf(o, set) gives o the event e.
func inSet(e lease.Event, set lease.EventSet) bool {
	switch {
	case e.Kind == lease.EventGranted:
		return set&lease.GrantEvents != 0
	case e.Kind == lease.EventRenewed:
		return set&lease.RenewEvents != 0
	case e.Kind == lease.EventEnded && e.Reason == lease.EndRevoked:
		return set&lease.RevokeEvents != 0
	case e.Kind == lease.EventEnded:
		return set&lease.ExpireEvents != 0
	case e.Kind == lease.EventDenied:
		return set&lease.DenyEvents != 0
	}
	return true // the drops
}

func TestObserverOfGetsTheSelectedEventsInOrder(t *testing.T) {
	script := func(s *lease.Service, clk *leasetest.FakeClock) {
		a := grant(t, s, lease.Operation, 10*time.Second)
		b := grant(t, s, lease.StateWrite, 5*time.Second)
		_, err := s.Use(ctx, a.ID, lease.StateWrite)
		requireCode(t, err, lease.CodePurposeMismatch, lease.ErrPurposeMismatch)
		_, err = s.Renew(ctx, a.ID)
		require.NoError(t, err)
		_, err = s.KeepAlive(ctx, b.ID)
		require.NoError(t, err)
		clk.Advance(3 * time.Second) // b renewed by its keep-alive
		_, err = s.Revoke(ctx, b.ID)
		require.NoError(t, err)
		_, err = s.Revoke(ctx, b.ID)
		requireCode(t, err, lease.CodeAlreadyRevoked, lease.ErrAlreadyRevoked)
		grant(t, s, lease.Operation, time.Second)
		clk.Advance(20 * time.Second) // a and the last one expire
	}
	all := &events{}
	s, clk := newService(t, lease.WithObserver(all))
	script(s, clk)
	require.Len(t, all.all(), 11)
	for _, set := range []lease.EventSet{0, lease.GrantEvents, lease.RenewEvents, lease.RevokeEvents,
		lease.ExpireEvents, lease.DenyEvents, lease.ExpireEvents | lease.DenyEvents,
		lease.GrantEvents | lease.RevokeEvents, lease.AllEvents} {
		rec := &events{}
		s, clk := newService(t, lease.WithObserverOf(rec, set))
		script(s, clk)
		var want []lease.Event
		for _, e := range all.all() {
			if inSet(e, set) {
				want = append(want, e)
			}
		}
		assert.Equal(t, want, rec.all(), "set %b", set)
	}
}

// Events an observer did not select take no place in its buffer: they are
// not dropped, so no drop is reported for them.
func TestObserverOfUnselectedEventsAreNotCountedAsDropped(t *testing.T) {
	obs := newBlockingObserver()
	s, _ := newService(t, lease.WithObserverOf(obs, lease.GrantEvents|lease.DenyEvents), lease.WithObserverBuffer(2))
	first := grantBehind(t, s, obs) // holds one place while observed
	for range 5 {
		l := grant(t, s, lease.StateWrite, time.Minute) // the first fits, the others are dropped
		_, err := s.Renew(ctx, l.ID)
		require.NoError(t, err)
		_, err = s.Revoke(ctx, l.ID)
		require.NoError(t, err)
	}
	close(obs.release)
	<-first
	for range 3 {
		l := grant(t, s, lease.Operation, time.Minute)
		_, err := s.Revoke(ctx, l.ID)
		require.NoError(t, err)
	}
	assert.Equal(t, []lease.EventKind{lease.EventGranted, lease.EventGranted, lease.EventEventsDropped,
		lease.EventGranted, lease.EventGranted, lease.EventGranted}, obs.kinds())
	assert.Equal(t, uint64(4), obs.all()[2].Count) // four grants, no renewal or revocation
}

// An observer that selected none of the events still hears of the
// decisions the audit sink dropped.
func TestObserverOfReportsDroppedDecisions(t *testing.T) {
	rec := &events{}
	sink := newBlockingObserver() // blocks the audit sink
	s, _ := newService(t, lease.WithObserverOf(rec, 0), auditFunc(func(lease.Decision) { sink.Observe(lease.Event{}) }), lease.WithObserverBuffer(2))
	first := grantBehind(t, s, sink) // delivers, and blocks in the sink
	for range 3 {
		grant(t, s, lease.Operation, time.Minute) // the second fits, the others are dropped
	}
	close(sink.release)
	<-first
	grant(t, s, lease.Operation, time.Minute) // reports what is left to report
	require.Equal(t, uint64(2), s.DroppedDecisions())
	var dropped uint64
	for _, e := range rec.all() {
		require.Equal(t, lease.EventDecisionsDropped, e.Kind)
		dropped += e.Count
	}
	assert.Equal(t, uint64(2), dropped)
}

func TestWithObserverOfTakesAnEmptySet(t *testing.T) {
	s, err := lease.New(lease.WithObserverOf(&events{}, 0))
	require.NoError(t, err)
	require.NoError(t, s.Close())
}
