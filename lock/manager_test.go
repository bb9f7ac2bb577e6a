package lock_test

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

func TestTryLockRunsUnderTheLockAndReleases(t *testing.T) {
	f := newFixture(t)
	ran := false
	acquired, err := f.m.TryLock(context.Background(), "job", func(ctx context.Context, l lock.Lease) error {
		ran = true
		assert.Equal(t, "job", l.Name)
		assert.Equal(t, "me", l.ExecutionID)
		assert.Equal(t, epoch.Add(testLease), l.ExpiresAt)
		assert.True(t, f.held(t, "job"), "held while fn runs")
		assert.NoError(t, ctx.Err())
		return nil
	})
	require.NoError(t, err)
	assert.True(t, acquired)
	assert.True(t, ran)
	assert.False(t, f.held(t, "job"), "released after fn")
	assert.Zero(t, f.mc.live.Load(), "no timer left behind")
}

func TestTryLockContention(t *testing.T) {
	f := newFixture(t)
	for _, holder := range []string{"other", "me"} { // not reentrant
		t.Run(holder, func(t *testing.T) {
			l, err := f.mem.Acquire(context.Background(), "job", holder, time.Minute)
			require.NoError(t, err)
			require.NotNil(t, l)
			defer func() { require.NoError(t, f.mem.Release(context.Background(), []lock.Lease{*l})) }()
			acquired, err := f.m.TryLock(context.Background(), "job", func(context.Context, lock.Lease) error {
				t.Error("fn called without the lock")
				return nil
			})
			assert.NoError(t, err)
			assert.False(t, acquired)
		})
	}
}

func TestTryLockReturnsFnError(t *testing.T) {
	f := newFixture(t)
	boom := errors.New("boom")
	acquired, err := f.m.TryLock(context.Background(), "job", func(context.Context, lock.Lease) error { return boom })
	assert.True(t, acquired)
	assert.Same(t, boom, err)
	assert.False(t, f.held(t, "job"))
}

func TestDoReturnsValue(t *testing.T) {
	f := newFixture(t)
	r, err := lock.Do(context.Background(), f.m, "job", func(_ context.Context, l lock.Lease) (uint64, error) {
		return l.Token, nil
	})
	require.NoError(t, err)
	assert.Equal(t, lock.Result[uint64]{Acquired: true, Value: r.Value}, r)
	assert.NotZero(t, r.Value)
}

func TestTryLockRenewsWhileFnRuns(t *testing.T) {
	f := newFixture(t)
	_, err := f.m.TryLock(context.Background(), "job", func(ctx context.Context, l lock.Lease) error {
		for i := 1; i <= 30; i++ { // ten lease durations, in steps of a third
			f.clock.Advance(testLease / 3)
			require.NoError(t, ctx.Err(), "step %d", i)
			require.Equal(t, i, f.p.renewCount(), "one renewal per third of the lease")
		}
		assert.True(t, f.held(t, "job"))
		return nil
	})
	require.NoError(t, err)
	assert.False(t, f.held(t, "job"))
}

// A renewal that does not return the lease means it is lost: fn's context
// is cancelled at that renewal, with cause ErrLockLost.
func TestTryLockLostOnRefusedRenewal(t *testing.T) {
	f := newFixture(t)
	acquired, err := f.m.TryLock(context.Background(), "job", func(ctx context.Context, l lock.Lease) error {
		f.p.setRenew(func(context.Context, []lock.Lease, time.Duration) ([]lock.Lease, error) { return nil, nil })
		f.clock.Advance(testLease/3 - 1)
		require.NoError(t, ctx.Err())
		f.clock.Advance(1)
		require.ErrorIs(t, ctx.Err(), context.Canceled)
		assert.Same(t, lock.ErrLockLost, context.Cause(ctx))
		return nil // fn ignores the loss; Do reports it anyway
	})
	assert.True(t, acquired)
	assert.Same(t, lock.ErrLockLost, err)
	assert.Zero(t, f.mc.live.Load())
}

// Renewals that fail with errors are retried; with none succeeding, fn's
// context is cancelled exactly a safety margin before the confirmed expiry.
func TestTryLockLostAtSafetyDeadline(t *testing.T) {
	const margin = 2 * time.Second
	f := newFixture(t, lock.WithSafetyMargin(margin), lock.WithRetryInterval(time.Second))
	boom := errors.New("fn saw the loss")
	_, err := f.m.TryLock(context.Background(), "job", func(ctx context.Context, l lock.Lease) error {
		f.p.setRenew(errFailing)
		f.clock.Advance(testLease - margin - 1)
		require.NoError(t, ctx.Err(), "still within the safety margin")
		// Renewal at 10 s, then retries every second up to the deadline.
		assert.Equal(t, 1+int((testLease-margin-testLease/3-1)/time.Second), f.p.renewCount())
		f.clock.Advance(1)
		assert.Same(t, lock.ErrLockLost, context.Cause(ctx))
		return boom
	})
	assert.ErrorIs(t, err, boom, "fn's error is kept")
	assert.ErrorIs(t, err, lock.ErrLockLost, "and the loss is reported")
}

// A renewal that fails and then succeeds keeps the lock, and the deadline
// moves with the successful renewal.
func TestTryLockRetrySucceeds(t *testing.T) {
	f := newFixture(t, lock.WithRetryInterval(time.Second))
	_, err := f.m.TryLock(context.Background(), "job", func(ctx context.Context, l lock.Lease) error {
		f.p.setRenew(errFailing)
		f.clock.Advance(testLease/3 + 2*time.Second) // the renewal and two retries fail
		f.p.setRenew(nil)
		f.clock.Advance(time.Second) // the third retry succeeds
		f.clock.Advance(testLease / 3 * 2)
		require.NoError(t, ctx.Err())
		assert.True(t, f.held(t, "job"))
		return nil
	})
	require.NoError(t, err)
}

// The lock was taken by someone else (here: its lease revoked under it) and
// the next renewal finds out.
func TestTryLockLostToRevocation(t *testing.T) {
	svc, clock := newFakeService(t)
	m := newManager(t, lease.Must(lock.NewMemory(svc)), lock.WithLeaseDuration(testLease))
	_, err := m.TryLock(context.Background(), "job", func(ctx context.Context, l lock.Lease) error {
		_, err := svc.Revoke(context.Background(), lease.ID(l.Token))
		require.NoError(t, err)
		clock.Advance(testLease / 3)
		<-ctx.Done()
		return ctx.Err()
	})
	assert.ErrorIs(t, err, lock.ErrLockLost)
	assert.ErrorIs(t, err, context.Canceled)
}

// fn may block while another goroutine drives the clock.
func TestTryLockFnBlocksWhileClockAdvances(t *testing.T) {
	f := newFixture(t)
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := f.m.TryLock(context.Background(), "job", func(ctx context.Context, l lock.Lease) error {
			close(started)
			<-ctx.Done()
			return context.Cause(ctx)
		})
		done <- err
	}()
	<-started
	f.clock.Advance(testLease) // renewed twice, fine
	assert.True(t, f.held(t, "job"))
	f.p.setRenew(errFailing)
	f.clock.Advance(testLease)
	assert.ErrorIs(t, <-done, lock.ErrLockLost)
	assert.False(t, f.held(t, "job"))
}

func TestTryLockPanicReleasesAndRepanics(t *testing.T) {
	f := newFixture(t)
	assert.PanicsWithValue(t, "kaboom", func() {
		_, _ = f.m.TryLock(context.Background(), "job", func(context.Context, lock.Lease) error { panic("kaboom") })
	})
	assert.False(t, f.held(t, "job"))
	assert.Zero(t, f.mc.live.Load())
}

func TestTryLockAcquireError(t *testing.T) {
	f := newFixture(t)
	f.p.acquire = func(context.Context, string, string, time.Duration) (*lock.Lease, error) { return nil, errProvider }
	acquired, err := f.m.TryLock(context.Background(), "job", func(context.Context, lock.Lease) error {
		t.Error("fn called")
		return nil
	})
	assert.False(t, acquired)
	assert.ErrorIs(t, err, errProvider)
}

// An Acquire that returns after the safety deadline of the lease it got
// leaves nothing to run fn under.
func TestTryLockSlowAcquire(t *testing.T) {
	f := newFixture(t)
	f.p.acquire = func(ctx context.Context, name, exec string, d time.Duration) (*lock.Lease, error) {
		l, err := f.mem.Acquire(ctx, name, exec, d)
		f.clock.Advance(d - d/10)
		return l, err
	}
	acquired, err := f.m.TryLock(context.Background(), "job", func(context.Context, lock.Lease) error {
		t.Error("fn called past the deadline")
		return nil
	})
	assert.False(t, acquired)
	assert.Same(t, lock.ErrLockLost, err)
	assert.False(t, f.held(t, "job"), "released")
}

func TestReleaseErrorHandler(t *testing.T) {
	var got []error
	f := newFixture(t)
	failed := errors.New("release failed")
	p := &failingRelease{Provider: f.p, err: failed}
	m := newManager(t, p, lease.WithClock(f.clock), lock.WithReleaseErrorHandler(func(_ lock.Lease, err error) { got = append(got, err) }))
	acquired, err := m.TryLock(context.Background(), "job", func(context.Context, lock.Lease) error { return nil })
	assert.True(t, acquired)
	assert.NoError(t, err, "a failed release does not fail the run")
	assert.Equal(t, []error{failed}, got)
}

type failingRelease struct {
	lock.Provider
	err error
}

func (p *failingRelease) Release(context.Context, []lock.Lease) error { return p.err }

func TestTryLockBadInput(t *testing.T) {
	f := newFixture(t)
	var nilCtx context.Context
	ok := func(context.Context, lock.Lease) error { return nil }
	cases := []struct {
		name  string
		ctx   context.Context
		lock  string
		fn    func(context.Context, lock.Lease) error
		field string
	}{
		{"nil ctx", nilCtx, "job", ok, "ctx"},
		{"empty name", context.Background(), "", ok, "name"},
		{"nil fn", context.Background(), "job", nil, "fn"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			acquired, err := f.m.TryLock(c.ctx, c.lock, c.fn)
			assert.False(t, acquired)
			assert.ErrorIs(t, err, lease.ErrInvalidArgument)
			var le *lease.Error
			require.ErrorAs(t, err, &le)
			assert.Equal(t, c.field, le.Field)
		})
	}
	assert.False(t, f.held(t, "job"))
}

// Values that can never be valid, whatever else is configured, are
// refused by NewManager with an error naming the option; the option
// constructors never panic.
func TestBadOptionsRefusedByNewManager(t *testing.T) {
	cases := []struct {
		option string
		opt    func() lock.Option
	}{
		{"WithLeaseDuration", func() lock.Option { return lock.WithLeaseDuration(0) }},
		{"WithLeaseDuration", func() lock.Option { return lock.WithLeaseDuration(-time.Second) }},
		{"WithExecutionID", func() lock.Option { return lock.WithExecutionID("") }},
		{"WithClock", func() lock.Option { return lease.WithClock(nil) }},
		{"WithSafetyMargin", func() lock.Option { return lock.WithSafetyMargin(-1) }},
		{"WithRetryInterval", func() lock.Option { return lock.WithRetryInterval(0) }},
		{"WithReleaseErrorHandler", func() lock.Option { return lock.WithReleaseErrorHandler(nil) }},
		{"WithPanicHandler", func() lock.Option { return lease.WithPanicHandler(nil) }},
		{"WithObserver", func() lock.Option { return lock.WithObserver(nil) }},
	}
	svc := lease.Must(lease.New())
	defer func() { require.NoError(t, svc.Close()) }()
	mem := lease.Must(lock.NewMemory(svc))
	for _, tc := range cases {
		var opt lock.Option
		require.NotPanics(t, func() { opt = tc.opt() }, tc.option)
		_, err := lock.NewManager(mem, opt)
		var le *lease.Error
		require.ErrorAs(t, err, &le, tc.option)
		assert.Equal(t, lease.CodeInvalidArgument, le.Code)
		assert.Equal(t, tc.option, le.Field)
		assert.Equal(t, "lock", le.Package)
	}
}

// A configuration that cannot work is an invalid-argument error naming the
// argument or option at fault, with the values in its detail, as
// client-go's leader election checks its durations.
func TestNewManagerRejects(t *testing.T) {
	mem := lease.Must(lock.NewMemory(lease.Must(lease.New())))
	d := lock.WithLeaseDuration
	cases := []struct {
		name     string
		provider lock.Provider
		opts     []lock.Option
		field    string
		detail   string // a part of the detail
	}{
		{"nil provider", nil, nil, "provider", "must not be nil"},
		{"a second clock for a provider with a time base", mem, []lock.Option{lease.WithClock(lease.SystemClock())},
			"WithClock", "the provider has its own time base"},
		{"a time base that is nil", nilBase{mem}, nil, "provider", "its Clock (TimeBase) returned nil"},
		{"margin >= duration", mem, []lock.Option{d(time.Second), lock.WithSafetyMargin(time.Second)}, "WithSafetyMargin", "safety margin 1s"},
		{"margin lost at the first renewal", mem, []lock.Option{d(30 * time.Second), lock.WithSafetyMargin(20 * time.Second)},
			"WithSafetyMargin", "safety margin 20s is not shorter than 20s, what is left of a 30s lease at its first renewal (after 10s)"},
		{"renewal interval rounds to zero", mem, []lock.Option{d(2)}, "WithLeaseDuration", "lease duration 2ns is too short"},
		{"retry that can never land", mem, []lock.Option{d(30 * time.Second), lock.WithRetryInterval(17 * time.Second)},
			"WithRetryInterval", "retry interval 17s is not shorter than 17s"},
		{"default retry that can never land", mem, []lock.Option{d(30 * time.Second), lock.WithSafetyMargin(19 * time.Second)},
			"WithRetryInterval", "retry interval 3s is not shorter than 1s, the time from the first renewal (after 10s) to the safety deadline (30s lease, 19s margin): a failed renewal could never be retried; that is the default retry interval"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := lock.NewManager(c.provider, c.opts...)
			assert.Nil(t, m)
			assert.ErrorIs(t, err, lease.ErrInvalidArgument)
			var le *lease.Error
			require.ErrorAs(t, err, &le)
			assert.Equal(t, c.field, le.Field)
			assert.Contains(t, le.Detail, c.detail)
		})
	}
}

type nilBase struct{ *lock.Memory }

func (nilBase) Clock() lease.Clock { return nil }

// The edges of the rules are accepted.
func TestNewManagerAccepts(t *testing.T) {
	mem := lease.Must(lock.NewMemory(lease.Must(lease.New())))
	for name, opts := range map[string][]lock.Option{
		"defaults":                   nil,
		"shortest lease":             {lock.WithLeaseDuration(3)},
		"margin just short":          {lock.WithLeaseDuration(30 * time.Second), lock.WithSafetyMargin(20*time.Second - 2), lock.WithRetryInterval(1)},
		"retry just short":           {lock.WithLeaseDuration(30 * time.Second), lock.WithRetryInterval(17*time.Second - 1)},
		"zero margin and long retry": {lock.WithLeaseDuration(30 * time.Second), lock.WithSafetyMargin(0), lock.WithRetryInterval(19 * time.Second)},
	} {
		_, err := lock.NewManager(mem, opts...)
		assert.NoError(t, err, name)
	}
}

func TestDefaultExecutionIDIsUnique(t *testing.T) {
	mem := lease.Must(lock.NewMemory(lease.Must(lease.New())))
	a, b := newManager(t, mem).ExecutionID(), newManager(t, mem).ExecutionID()
	assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{32}$`), a)
	assert.NotEqual(t, a, b)
}
