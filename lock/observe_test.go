package lock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// lockRecorder is an Observer and a HoldTracer that records what it is
// told.
type lockRecorder struct {
	mu     sync.Mutex
	events []lock.Event
	ends   []error
}

type holdKey struct{}

func (r *lockRecorder) Observe(e lock.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *lockRecorder) TraceHold(ctx context.Context, l lock.Lease) (context.Context, func(error)) {
	return context.WithValue(ctx, holdKey{}, l.Name), func(err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ends = append(r.ends, err)
	}
}

func (r *lockRecorder) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, e.Kind.String())
	}
	return out
}

func TestObserverSeesAHolding(t *testing.T) {
	rec := &lockRecorder{}
	f := newFixture(t, lock.WithObserver(rec))
	f.p.acquire = func(ctx context.Context, name, exec string, d time.Duration) (*lock.Lease, error) {
		f.clock.Advance(2 * time.Second) // a slow provider
		return f.mem.Acquire(ctx, name, exec, d)
	}
	ok, err := f.m.TryLock(context.Background(), "jobs", func(ctx context.Context, _ lock.Lease) error {
		assert.Equal(t, "jobs", ctx.Value(holdKey{}), "the function runs in the tracer's context")
		f.clock.Advance(11 * time.Second) // one renewal, at a third of 30 s
		return nil
	})
	require.NoError(t, err)
	require.True(t, ok)

	assert.Equal(t, []string{"acquired", "renewed", "released"}, rec.kinds())
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, 2*time.Second, rec.events[0].Wait)
	assert.Equal(t, "me", rec.events[0].Lease.ExecutionID)
	assert.Equal(t, rec.events[0].Lease.Token, rec.events[2].Lease.Token)
	assert.Equal(t, 11*time.Second, rec.events[2].Held)
	assert.NoError(t, rec.events[2].Err)
	assert.Equal(t, []error{nil}, rec.ends)
}

func TestObserverSeesALoss(t *testing.T) {
	rec := &lockRecorder{}
	f := newFixture(t, lock.WithObserver(rec))
	f.p.setRenew(errFailing)
	_, err := f.m.TryLock(context.Background(), "jobs", func(ctx context.Context, _ lock.Lease) error {
		f.clock.Advance(testLease)
		<-ctx.Done()
		return nil
	})
	require.ErrorIs(t, err, lock.ErrLockLost)
	assert.Equal(t, []string{"acquired", "lost", "released"}, rec.kinds())
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, testLease-testLease/10, rec.events[1].Held, "lost at the safety deadline")
	require.Len(t, rec.ends, 1)
	assert.ErrorIs(t, rec.ends[0], lock.ErrLockLost)
}

func TestObserverPanicIsReported(t *testing.T) {
	var panics []*lease.PanicError
	var mu sync.Mutex
	f := newFixture(t, lock.WithObserver(lock.ObserverFunc(func(lock.Event) { panic("boom") })),
		lease.WithPanicHandler(func(p *lease.PanicError) { mu.Lock(); panics = append(panics, p); mu.Unlock() }))
	ok, err := f.m.TryLock(context.Background(), "jobs", func(context.Context, lock.Lease) error { return nil })
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, panics, 2) // acquired and released
	assert.Equal(t, "observer", panics[0].Callback)
	assert.False(t, f.held(t, "jobs"))
	assert.Equal(t, "EventKind(9)", lock.EventKind(9).String())
}

// TestObserverSeesALossAsItHappens: the loss is reported when the renewal
// finds it, while the function still runs, not once the function returns.
func TestObserverSeesALossAsItHappens(t *testing.T) {
	for _, tc := range []struct {
		name  string
		renew func(context.Context, []lock.Lease, time.Duration) ([]lock.Lease, error)
		after time.Duration // when the loss is found
	}{
		{"renewal without the lease", func(context.Context, []lock.Lease, time.Duration) ([]lock.Lease, error) {
			return nil, nil
		}, testLease / 3},
		{"safety deadline", errFailing, testLease - testLease/10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &lockRecorder{}
			f := newFixture(t, lock.WithObserver(rec))
			f.p.setRenew(tc.renew)
			_, err := f.m.TryLock(context.Background(), "jobs", func(ctx context.Context, _ lock.Lease) error {
				f.clock.Advance(tc.after)
				require.Error(t, ctx.Err(), "the function's context ended with the loss")
				assert.Equal(t, []string{"acquired", "lost"}, rec.kinds(), "reported while the function runs")
				f.clock.Advance(time.Hour) // nothing more is reported before it returns
				assert.Equal(t, []string{"acquired", "lost"}, rec.kinds())
				return nil
			})
			require.ErrorIs(t, err, lock.ErrLockLost)
			assert.Equal(t, []string{"acquired", "lost", "released"}, rec.kinds())
			rec.mu.Lock()
			defer rec.mu.Unlock()
			assert.Equal(t, tc.after, rec.events[1].Held, "held until the loss was found")
			assert.Equal(t, tc.after+time.Hour, rec.events[2].Held)
			require.Len(t, rec.ends, 1)
			assert.ErrorIs(t, rec.ends[0], lock.ErrLockLost)
		})
	}
}

// TestJoinedObservers: observers joined by lease.Observers each see every
// event, each HoldTracer among them wraps the holding (the first
// outermost, the innermost ended first), and one that panics is reported
// by the Manager's panic policy as Callback "observer" without keeping
// the others from the event.
func TestJoinedObservers(t *testing.T) {
	var mu sync.Mutex
	var panics []*lease.PanicError
	var order []string
	outer, inner := &lockRecorder{}, &lockRecorder{}
	bad := lease.ObserverFunc[lock.Event](func(lock.Event) { panic("observer failed") })
	tracing := func(name string, r *lockRecorder) lease.Observer[lock.Event] {
		return namedTracer{r, func(what string) { mu.Lock(); order = append(order, what+" "+name); mu.Unlock() }}
	}
	f := newFixture(t, lock.WithObserver(lease.Observers(tracing("outer", outer), bad, tracing("inner", inner))),
		lease.WithPanicHandler(func(p *lease.PanicError) { mu.Lock(); panics = append(panics, p); mu.Unlock() }))
	ok, err := f.m.TryLock(context.Background(), "jobs", func(ctx context.Context, _ lock.Lease) error {
		assert.Equal(t, "jobs", ctx.Value(holdKey{}), "the function runs in the tracers' context")
		return nil
	})
	require.NoError(t, err)
	require.True(t, ok)

	for _, r := range []*lockRecorder{outer, inner} {
		assert.Equal(t, []string{"acquired", "released"}, r.kinds())
		r.mu.Lock()
		assert.Equal(t, []error{nil}, r.ends)
		r.mu.Unlock()
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"begin outer", "begin inner", "end inner", "end outer"}, order)
	require.Len(t, panics, 2) // acquired and released
	for _, p := range panics {
		assert.Equal(t, "observer", p.Callback)
	}
}

// namedTracer is a lockRecorder that also tells note when its holdings
// begin and end.
type namedTracer struct {
	*lockRecorder
	note func(string)
}

func (n namedTracer) TraceHold(ctx context.Context, l lock.Lease) (context.Context, func(error)) {
	n.note("begin")
	ctx, end := n.lockRecorder.TraceHold(ctx, l)
	return ctx, func(err error) { n.note("end"); end(err) }
}
