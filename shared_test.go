package lease_test

import (
	"bytes"
	"context"
	"log/slog"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

// constructor builds one component of the module with the shared options
// given and an observer that panics, and makes it report one event.
type constructor struct {
	name string
	// build returns the component's constructor error, after making the
	// component report an event to its observer when it was built.
	build func(t *testing.T, svc *lease.Service, shared ...lease.SharedOption) error
}

// panicking is an observer of any event type that panics.
func panicking[E any]() lease.ObserverFunc[E] {
	return func(E) { panic("observer failed") }
}

var constructors = []constructor{
	{"lease.New", func(t *testing.T, svc *lease.Service, shared ...lease.SharedOption) error {
		opts := []lease.Option{lease.WithObserver(panicking[lease.Event]())}
		for _, o := range shared {
			opts = append(opts, o)
		}
		s, err := lease.New(opts...)
		if err != nil {
			return err
		}
		defer func() { require.NoError(t, s.Close()) }()
		_, err = s.Grant(ctx, "h", lease.Operation, time.Minute)
		require.NoError(t, err)
		return nil
	}},
	{"lock.NewManager", func(t *testing.T, svc *lease.Service, shared ...lease.SharedOption) error {
		opts := []lock.Option{lock.WithObserver(panicking[lock.Event]())}
		for _, o := range shared {
			opts = append(opts, o)
		}
		m, err := lock.NewManager(lease.Must(lock.NewMemory(svc)), opts...)
		if err != nil {
			return err
		}
		ok, err := m.TryLock(ctx, "job", func(context.Context, lock.Lease) error { return nil })
		require.NoError(t, err)
		require.True(t, ok)
		return nil
	}},
	{"claim.New", func(t *testing.T, svc *lease.Service, shared ...lease.SharedOption) error {
		opts := []claim.Option{claim.WithObserver(panicking[claim.Event]())}
		for _, o := range shared {
			opts = append(opts, o)
		}
		store := lease.Must(claim.NewMemory(svc))
		b, err := claim.New(store, opts...)
		if err != nil {
			require.NoError(t, store.Close())
			return err
		}
		defer func() { require.NoError(t, b.Close()) }()
		_, err = b.Enqueue(ctx, "q", []byte("x"))
		require.NoError(t, err)
		claims, err := b.Claim(ctx, "q", "w", 1, time.Minute)
		require.NoError(t, err)
		require.Len(t, claims, 1)
		require.NoError(t, b.Complete(ctx, claims[0]))
		return nil
	}},
	{"election.New", func(t *testing.T, svc *lease.Service, shared ...lease.SharedOption) error {
		opts := []election.Option{election.WithObserver(panicking[election.Event]())}
		for _, o := range shared {
			opts = append(opts, o)
		}
		e, err := election.New(lease.Must(lock.NewMemory(svc)), "leader", opts...)
		if err != nil {
			return err
		}
		ld, err := e.Campaign(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, ld.Resign(ctx))
		return nil
	}},
}

// TestSharedOptionsConfigureEveryConstructor: one value of each shared
// option configures every constructor of the module: the panic handler
// receives the panics of each one's observer, and without a handler the
// logger given records them.
func TestSharedOptionsConfigureEveryConstructor(t *testing.T) {
	var mu sync.Mutex
	var handled []string
	handler := lease.WithPanicHandler(func(p *lease.PanicError) {
		mu.Lock()
		defer mu.Unlock()
		handled = append(handled, p.Callback)
	})
	var logged bytes.Buffer
	logger := lease.WithLogger(slog.New(slog.NewTextHandler(&syncWriter{w: &logged}, nil)))
	for _, c := range constructors {
		t.Run(c.name, func(t *testing.T) {
			svc, _ := newService(t)
			handled, logged = nil, bytes.Buffer{}
			require.NoError(t, c.build(t, svc, handler, logger))
			mu.Lock()
			assert.Contains(t, handled, "observer", "the handler is given the observer's panic")
			mu.Unlock()
			assert.Empty(t, logged.String(), "a handler replaces the logging")

			handled = nil
			require.NoError(t, c.build(t, svc, logger))
			assert.Empty(t, handled)
			assert.Contains(t, logged.String(), "callback panicked")
			assert.Contains(t, logged.String(), "callback=observer")
		})
	}
}

// syncWriter serializes writes: observers may run on other goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestSharedOptionsRefusedByEveryConstructor: every constructor refuses
// the same bad shared values, with the same Field, and a nil option too,
// returning an error rather than panicking.
func TestSharedOptionsRefusedByEveryConstructor(t *testing.T) {
	bad := []struct {
		field string
		opt   lease.SharedOption
	}{
		{"WithClock", lease.WithClock(nil)},
		{"WithPanicHandler", lease.WithPanicHandler(nil)},
		{"WithLogger", lease.WithLogger(nil)},
		{"SharedOption", lease.SharedOption{}},
	}
	for _, c := range constructors {
		t.Run(c.name, func(t *testing.T) {
			svc, _ := newService(t)
			for _, b := range bad {
				err := c.build(t, svc, b.opt)
				requireField(t, err, b.field)
			}
		})
	}
}

// TestNilOptionRefused: a nil Option is an error from every constructor,
// never a panic.
func TestNilOptionRefused(t *testing.T) {
	svc, _ := newService(t)
	_, err := lease.New(nil)
	requireField(t, err, "Option")
	_, err = lock.NewManager(lease.Must(lock.NewMemory(svc)), nil)
	requireField(t, err, "Option")
	_, err = election.New(lease.Must(lock.NewMemory(svc)), "leader", nil)
	requireField(t, err, "Option")
	store := lease.Must(claim.NewMemory(svc))
	_, err = claim.New(store, nil)
	requireField(t, err, "Option")
	require.NoError(t, store.Close())
}

// TestSecondClockRefused: a component over something with a clock of its
// own refuses WithClock alike, whichever package it is in (a Service has
// no such thing: it takes the clock).
func TestSecondClockRefused(t *testing.T) {
	svc, clk := newService(t)
	for _, c := range constructors[1:] {
		t.Run(c.name, func(t *testing.T) {
			requireField(t, c.build(t, svc, lease.WithClock(clk)), "WithClock")
		})
	}
}

// TestPackageOptionsStayTheirOwn: an option of one package is not an
// Option of another; the shared ones are an Option of all.
func TestPackageOptionsStayTheirOwn(t *testing.T) {
	types := map[string]reflect.Type{
		"lease":    reflect.TypeFor[lease.Option](),
		"lock":     reflect.TypeFor[lock.Option](),
		"claim":    reflect.TypeFor[claim.Option](),
		"election": reflect.TypeFor[election.Option](),
	}
	own := map[string]any{
		"lease":    lease.WithAuditCapacity(1),
		"lock":     lock.WithLeaseDuration(time.Second),
		"claim":    claim.WithMaxAttempts(1),
		"election": election.WithPollInterval(time.Second),
	}
	for pkg, opt := range own {
		for other, typ := range types {
			assert.Equal(t, pkg == other, reflect.TypeOf(opt).Implements(typ), "a %s option as a %s.Option", pkg, other)
		}
	}
	for name, typ := range types {
		assert.True(t, reflect.TypeFor[lease.SharedOption]().Implements(typ), "SharedOption is a %s.Option", name)
	}
}
