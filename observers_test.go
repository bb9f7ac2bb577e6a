package lease_test

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// decisions records what an audit observer is told, safe for concurrent
// use. It is no ObserverFunc: the option calls it through the interface.
type decisions struct {
	mu  sync.Mutex
	got []lease.Decision
}

func (r *decisions) Observe(d lease.Decision) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, d)
}

func (r *decisions) all() []lease.Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]lease.Decision(nil), r.got...)
}

// panics records the panics a service reports, safe for concurrent use.
type panics struct {
	mu  sync.Mutex
	got []*lease.PanicError
}

func (p *panics) handle(e *lease.PanicError) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, e)
}

func (p *panics) all() []*lease.PanicError {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*lease.PanicError(nil), p.got...)
}

// TestObserversTellEachInOrder: the observers joined each see every event,
// in the order given, and nil entries are left out.
func TestObserversTellEachInOrder(t *testing.T) {
	var order []string
	first, second := &events{}, &events{}
	tag := func(name string, r *events) lease.Observer[lease.Event] {
		return lease.ObserverFunc[lease.Event](func(e lease.Event) {
			order = append(order, name) // one goroutine at a time: the service's rule
			r.Observe(e)
		})
	}
	s, _ := newService(t, lease.WithObserver(lease.Observers(tag("first", first), nil, tag("second", second))))
	l := grant(t, s, lease.Operation, time.Minute)
	_, err := s.Revoke(ctx, l.ID)
	require.NoError(t, err)

	want := []lease.EventKind{lease.EventGranted, lease.EventEnded}
	assert.Equal(t, want, first.kinds())
	assert.Equal(t, first.all(), second.all())
	assert.Equal(t, []string{"first", "second", "first", "second"}, order)
}

// TestObserversOfFewOrNone: no observer joins to nil, one to itself.
func TestObserversOfFewOrNone(t *testing.T) {
	assert.Nil(t, lease.Observers[lease.Event]())
	assert.Nil(t, lease.Observers[lease.Event](nil, nil))
	only := &events{}
	assert.Same(t, only, lease.Observers[lease.Event](nil, only))
}

// TestObserversUnwrap: the observers joined come back in order, in a slice
// of the caller's own.
func TestObserversUnwrap(t *testing.T) {
	a, b := &events{}, &events{}
	joined, ok := lease.Observers[lease.Event](a, b).(interface {
		Unwrap() []lease.Observer[lease.Event]
	})
	require.True(t, ok)
	list := joined.Unwrap()
	require.Equal(t, []lease.Observer[lease.Event]{a, b}, list)
	list[0] = nil
	assert.Equal(t, []lease.Observer[lease.Event]{a, b}, joined.Unwrap(), "Unwrap aliases nothing")
}

// panicky panics with its argument: a named function, so that a stack shows
// it.
func panicky(v any) { panic(v) }

// TestObserversPanicReachesTheRest: an observer that panics keeps none of
// the others from the event; the service reports the panic once, as
// Callback "observer", with the stack of the observer that panicked, and
// goes on to the next event.
func TestObserversPanicReachesTheRest(t *testing.T) {
	var got panics
	before, after := &events{}, &events{}
	bad := lease.ObserverFunc[lease.Event](func(e lease.Event) {
		if e.Kind == lease.EventGranted {
			panicky("observer failed")
		}
	})
	s, _ := newService(t, lease.WithPanicHandler(got.handle),
		lease.WithObserver(lease.Observers(before, bad, after)))
	l := grant(t, s, lease.Operation, time.Minute)
	_, err := s.Revoke(ctx, l.ID)
	require.NoError(t, err)

	want := []lease.EventKind{lease.EventGranted, lease.EventEnded}
	assert.Equal(t, want, before.kinds())
	assert.Equal(t, want, after.kinds())
	reported := got.all()
	require.Len(t, reported, 1)
	assert.Equal(t, "observer", reported[0].Callback)
	assert.Equal(t, "observer failed", reported[0].Value)
	assert.True(t, bytes.Contains(reported[0].Stack, []byte("lease_test.panicky")), "the stack is the panicking observer's:\n%s", reported[0].Stack)
}

// TestAuditObserverSeesTheTrail: an Observer[Decision] sees every decision
// Audit keeps, allowed Uses and trace IDs included, in order; several
// share the option through Observers; a panic in one is reported as
// Callback "audit observer" and the others still see the decision.
func TestAuditObserverSeesTheTrail(t *testing.T) {
	var got panics
	a, b := &decisions{}, &decisions{}
	bad := lease.ObserverFunc[lease.Decision](func(d lease.Decision) {
		if d.Action == lease.ActionUse {
			panic("audit observer failed")
		}
	})
	s, clk := newService(t, lease.WithPanicHandler(got.handle),
		lease.WithAuditObserver(lease.Observers(a, bad, b)))
	l, err := s.Grant(lease.WithTraceID(ctx, "tr-1"), "alice", lease.Operation, time.Second)
	require.NoError(t, err)
	_, err = s.Use(ctx, l.ID, lease.Operation)
	require.NoError(t, err)
	_, err = s.Use(ctx, l.ID, lease.StateWrite)
	require.ErrorIs(t, err, lease.ErrPurposeMismatch)
	clk.Advance(time.Second)
	s.ActiveCount() // settles and delivers

	trail := s.Audit()
	require.Len(t, trail, 4)
	assert.Equal(t, trail, a.all())
	assert.Equal(t, trail, b.all())
	assert.Equal(t, "tr-1", a.all()[0].TraceID)
	reported := got.all()
	require.Len(t, reported, 2, "each Use panicked")
	for _, p := range reported {
		assert.Equal(t, "audit observer", p.Callback)
	}
}
