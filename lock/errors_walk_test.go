package lock_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// TestEveryErrorIsALeaseError walks the package's API with bad input, a
// lost lock, a stale token and a closed provider, and checks every error is
// a *lease.Error with a code, whose text starts with "lock: " and ends with
// its code.
func TestEveryErrorIsALeaseError(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var nilCtx context.Context
	noop := func(context.Context, lock.Lease) error { return nil }
	var fence lock.Fence
	require.NoError(t, fence.Check("a", 9))

	calls := map[string]func() error{
		"Acquire empty name": func() error { _, err := f.mem.Acquire(ctx, "", "me", time.Second); return err },
		"Acquire empty exec": func() error { _, err := f.mem.Acquire(ctx, "a", "", time.Second); return err },
		"Acquire zero d":     func() error { _, err := f.mem.Acquire(ctx, "a", "me", 0); return err },
		"Acquire nil ctx":    func() error { _, err := f.mem.Acquire(nilCtx, "a", "me", time.Second); return err },
		"AcquireValue too big": func() error {
			_, err := f.mem.AcquireValue(ctx, "a", "me", time.Second, make([]byte, lock.MaxValueSize+1))
			return err
		},
		"Renew zero d":        func() error { _, err := f.mem.Renew(ctx, nil, 0); return err },
		"Release empty name":  func() error { return f.mem.Release(ctx, []lock.Lease{{ExecutionID: "me"}}) },
		"Holder empty name":   func() error { _, _, err := f.mem.Holder(ctx, ""); return err },
		"Held negative limit": func() error { _, err := f.mem.Held(ctx, "", -1); return err },
		"TryLock empty name":  func() error { _, err := f.m.TryLock(ctx, "", noop); return err },
		"Fence stale token":   func() error { return fence.Check("a", 3) },
		"NewManager nil":      func() error { _, err := lock.NewManager(nil); return err },
		"NewManager margin":   func() error { _, err := lock.NewManager(f.mem, lock.WithSafetyMargin(time.Hour)); return err },
		"TryLock lost": func() error {
			_, err := f.m.TryLock(ctx, "lost", func(ctx context.Context, l lock.Lease) error {
				f.p.setRenew(func(context.Context, []lock.Lease, time.Duration) ([]lock.Lease, error) { return nil, nil })
				f.clock.Advance(testLease / 3)
				<-ctx.Done()
				return nil
			})
			f.p.setRenew(nil)
			return err
		},
		"ErrLockLost":   func() error { return lock.ErrLockLost },
		"ErrStaleToken": func() error { return lock.ErrStaleToken },
	}
	svc, _ := newFakeService(t)
	closed := lease.Must(lock.NewMemory(svc))
	require.NoError(t, svc.Close())
	calls["Acquire closed"] = func() error { _, err := closed.Acquire(ctx, "a", "me", time.Second); return err }
	calls["AcquireWait closed"] = func() error { _, err := closed.AcquireWait(ctx, "a", "me", time.Second); return err }
	calls["Renew closed"] = func() error {
		_, err := closed.Renew(ctx, []lock.Lease{{Name: "a", ExecutionID: "me", Token: 1}}, time.Second)
		return err
	}
	calls["Holder closed"] = func() error { _, _, err := closed.Holder(ctx, "a"); return err }

	for _, name := range slices.Sorted(maps.Keys(calls)) {
		t.Run(name, func(t *testing.T) { requireVoice(t, calls[name](), "lock") })
	}
}

// requireVoice checks err is a *lease.Error with a code, prefixed by pkg.
func requireVoice(t *testing.T, err error, pkg string) {
	t.Helper()
	require.Error(t, err)
	var le *lease.Error
	require.ErrorAs(t, err, &le, "%T: %v", err, err)
	require.NotEmpty(t, le.Code)
	assert.Equal(t, le.Code, lease.CodeOf(err))
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, pkg+": "), "%q starts with %q", msg, pkg+": ")
	assert.True(t, strings.HasSuffix(msg, " ["+string(le.Code)+"]"), "%q ends with its code", msg)
}
