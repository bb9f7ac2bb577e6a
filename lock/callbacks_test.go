package lock_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

// A release-error handler that panics follows the module's panic policy:
// the panic is recovered and reported to the Manager's panic handler, and
// TryLock returns as if the handler had returned; the Manager goes on.
func TestReleaseErrorHandlerPanic(t *testing.T) {
	f := newFixture(t)
	var panics leasetest.PanicRecorder
	m := newManager(t, &failingRelease{Provider: f.p, err: errProvider}, lease.WithClock(f.clock),
		lease.WithPanicHandler(panics.Handle),
		lock.WithReleaseErrorHandler(func(lock.Lease, error) { panic("boom") }))
	for range 2 {
		assert.NotPanics(t, func() {
			acquired, err := m.TryLock(context.Background(), "job", func(context.Context, lock.Lease) error { return nil })
			assert.True(t, acquired)
			assert.NoError(t, err)
		})
		require.True(t, f.held(t, "job"), "the failed release left it held")
		f.clock.Advance(testLease) // until it expires
	}
	require.Len(t, panics.Panics(), 2)
	assert.Equal(t, "release error handler", panics.Panics()[0].Callback)
	assert.Equal(t, "boom", panics.Panics()[0].Value)
	assert.Contains(t, string(panics.Panics()[0].Stack), "TestReleaseErrorHandlerPanic")
}

// By default a recovered panic goes to lease.LogPanic: slog's default
// logger, at Error level.
func TestDefaultPanicHandlerLogs(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)
	f := newFixture(t)
	m := newManager(t, &failingRelease{Provider: f.p, err: errProvider}, lease.WithClock(f.clock),
		lock.WithReleaseErrorHandler(func(lock.Lease, error) { panic(errors.New("handler failed")) }))
	_, err := m.TryLock(context.Background(), "job", func(context.Context, lock.Lease) error { return nil })
	assert.NoError(t, err)
	assert.Contains(t, buf.String(), "level=ERROR")
	assert.Contains(t, buf.String(), "callback panicked")
	assert.Contains(t, buf.String(), "release error handler")
	assert.Contains(t, buf.String(), "handler failed")
}

// A provider whose Renew panics in a renewal timer is a failed renewal:
// reported, and retried; the retry that succeeds keeps the lock.
func TestProviderRenewPanic(t *testing.T) {
	var panics leasetest.PanicRecorder
	f := newFixture(t, lease.WithPanicHandler(panics.Handle), lock.WithRetryInterval(time.Second))
	_, err := f.m.TryLock(context.Background(), "job", func(ctx context.Context, l lock.Lease) error {
		f.p.setRenew(func(context.Context, []lock.Lease, time.Duration) ([]lock.Lease, error) { panic("renew exploded") })
		assert.NotPanics(t, func() { f.clock.Advance(testLease / 3) })
		require.NoError(t, ctx.Err(), "a panicking renewal is retried, not a loss")
		f.p.setRenew(nil)
		f.clock.Advance(time.Second)
		f.clock.Advance(testLease)
		require.NoError(t, ctx.Err())
		assert.True(t, f.held(t, "job"))
		return nil
	})
	require.NoError(t, err)
	require.Len(t, panics.Panics(), 1)
	assert.Equal(t, "provider renew", panics.Panics()[0].Callback)
	assert.Equal(t, "renew exploded", panics.Panics()[0].Value)
}

// The panic handler may call back into the Manager.
func TestPanicHandlerReentrant(t *testing.T) {
	f := newFixture(t)
	var m *lock.Manager
	var inner bool
	var innerErr error
	m = newManager(t, &failingRelease{Provider: f.p, err: errProvider}, lease.WithClock(f.clock),
		lease.WithPanicHandler(func(*lease.PanicError) {
			if !inner {
				inner = true
				_, innerErr = m.TryLock(context.Background(), "other", func(context.Context, lock.Lease) error { return nil })
			}
		}),
		lock.WithReleaseErrorHandler(func(lock.Lease, error) { panic("boom") }))
	within(t, "TryLock", func() {
		_, err := m.TryLock(context.Background(), "job", func(context.Context, lock.Lease) error { return nil })
		assert.NoError(t, err)
	})
	assert.True(t, inner)
	assert.NoError(t, innerErr)
}
