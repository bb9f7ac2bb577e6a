package lease_test

import (
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
	s := lease.New(lease.WithClock(lateClock{fake}), lease.WithObserver(rec))
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
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	sink := func(lease.Decision) {
		once.Do(func() { close(entered); <-release })
	}
	s, _ := newService(t, lease.WithObserver(rec), lease.WithAuditSink(sink), lease.WithSinkBuffer(2))

	first := make(chan struct{})
	go func() {
		defer close(first)
		grant(t, s, lease.Operation, time.Minute) // delivers, and blocks in the sink
	}()
	<-entered
	// Queued behind the blocked sink: the second grant's decision fits, the
	// next two are dropped; the observer's buffer takes two events.
	for range 3 {
		grant(t, s, lease.Operation, time.Minute)
	}
	close(release)
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
	obs := lease.ObserverFunc(func(lease.Event) { calls++; panic("boom") })
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

func TestWithObserverNilPanics(t *testing.T) {
	assert.Panics(t, func() { lease.WithObserver(nil) })
	assert.Equal(t, "EventKind(9)", lease.EventKind(9).String())
}
