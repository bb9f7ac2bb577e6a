package lock_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

// within runs f on another goroutine and fails the test if it has not
// returned after 5 s: a guard that turns a deadlock into a failure. f must
// report with assert, not require.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s has not returned after 5 s: a deadlock", what)
	}
}

// An ending subscriber of the service may call back into a Memory with a
// lock-delay from the notification that one of the Memory's own calls
// delivers: every pair of (call that triggers, call from the subscriber)
// completes, and the lock-delay still holds. The service's timer never
// fires, so expiries are settled, and notified, inside the Memory's calls.
func TestMemoryReentrantFromOnEnd(t *testing.T) {
	ops := []string{"acquire", "renew", "release"}
	for _, trigger := range ops {
		for _, callee := range ops {
			t.Run(trigger+" notifies, subscriber calls "+callee, func(t *testing.T) {
				ctx := context.Background()
				fake := leasetest.NewFakeClock(epoch)
				svc := lease.Must(lease.New(lease.WithClock(leasetest.Stalled(fake))))
				defer svc.Close()
				mem := lease.Must(lock.NewMemory(svc, lock.WithLockDelay(5*time.Second)))
				a, err := mem.Acquire(ctx, "x", "a", 10*time.Second) // the lease whose end is notified
				require.NoError(t, err)
				c, err := mem.Acquire(ctx, "z", "c", time.Hour) // another, for the subscriber's Renew and Release
				require.NoError(t, err)

				var ran atomic.Bool
				var subErr error
				var subGot *lock.Lease
				stop := svc.OnEnd(func(l lease.Lease, _ lease.EndReason) {
					if l.ID != lease.ID(a.Token) || !ran.CompareAndSwap(false, true) {
						return
					}
					switch callee {
					case "acquire":
						subGot, subErr = mem.Acquire(ctx, "x", "sub", 10*time.Second)
					case "renew":
						_, subErr = mem.Renew(ctx, []lock.Lease{*c}, time.Hour)
					case "release":
						subErr = mem.Release(ctx, []lock.Lease{*c})
					}
				})
				defer stop()

				within(t, trigger, func() {
					switch trigger {
					case "release": // a is revoked inside Release
						assert.NoError(t, mem.Release(ctx, []lock.Lease{*a}))
					case "acquire": // a's expiry is settled inside Acquire
						fake.Advance(12 * time.Second)
						_, err := mem.Acquire(ctx, "y", "b", 10*time.Second)
						assert.NoError(t, err)
					case "renew": // and inside Renew
						fake.Advance(12 * time.Second)
						_, err := mem.Renew(ctx, []lock.Lease{*c}, time.Hour)
						assert.NoError(t, err)
					}
				})
				require.True(t, ran.Load(), "the subscriber ran")
				require.NoError(t, subErr)
				if callee == "acquire" {
					if trigger == "release" {
						assert.NotNil(t, subGot, "a released lock has no delay")
					} else {
						assert.Nil(t, subGot, "at 12 s, a lock that expired at 10 s is in its 5 s delay")
					}
				}
			})
		}
	}
}

// The Manager's callbacks may call back into it: a renewal through the
// provider, the release-error handler. Neither runs under a lock of the
// Manager.
func TestManagerReentrantCallbacks(t *testing.T) {
	t.Run("provider renewal", func(t *testing.T) {
		f := newFixture(t)
		var inner bool
		var innerErr error
		f.p.setRenew(func(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
			inner, innerErr = f.m.TryLock(ctx, "other", func(context.Context, lock.Lease) error { return nil })
			return f.mem.Renew(ctx, leases, d)
		})
		within(t, "TryLock", func() {
			_, err := f.m.TryLock(context.Background(), "job", func(ctx context.Context, l lock.Lease) error {
				f.clock.Advance(testLease / 3)
				return ctx.Err()
			})
			assert.NoError(t, err)
		})
		assert.True(t, inner, "the renewal ran TryLock on another name")
		assert.NoError(t, innerErr)
	})
	t.Run("release error handler", func(t *testing.T) {
		f := newFixture(t)
		var m *lock.Manager
		var once atomic.Bool
		var inner bool
		var innerErr error
		m = newManager(t, &failingRelease{Provider: f.p, err: errProvider}, lease.WithClock(f.clock),
			lock.WithReleaseErrorHandler(func(l lock.Lease, _ error) {
				if once.CompareAndSwap(false, true) { // the inner release fails too
					inner, innerErr = m.TryLock(context.Background(), "other", func(context.Context, lock.Lease) error { return nil })
				}
			}))
		within(t, "TryLock", func() {
			_, err := m.TryLock(context.Background(), "job", func(context.Context, lock.Lease) error { return nil })
			assert.NoError(t, err)
		})
		assert.True(t, inner, "the handler ran TryLock")
		assert.NoError(t, innerErr)
	})
}

// An audit sink runs inside the service's call, after the service decided
// it: here after it renewed a lock's lease to 18 s and before the Memory
// recorded that. The sink moves time to 19 s, past the new expiry, and
// tries to take the lock: the lease expired at 18 s, so the lock is in its
// delay until 23 s, though the Memory's record still says it expired at
// 10 s. The renewal under way makes the Memory refuse; it completes, and
// the delay runs from the expiry the service set.
func TestMemoryLockDelayWhileARenewalIsUnderWay(t *testing.T) {
	ctx := context.Background()
	fake := leasetest.NewFakeClock(epoch)
	var mem *lock.Memory
	var p *lock.Lease
	var inSink atomic.Bool
	var got *lock.Lease
	var sinkErr error
	svc := lease.Must(lease.New(lease.WithClock(leasetest.Stalled(fake)), lease.WithAuditObserver(lease.ObserverFunc[lease.Decision](func(d lease.Decision) {
		if p == nil || d.LeaseID != lease.ID(p.Token) || d.Action != lease.ActionRenew || !inSink.CompareAndSwap(false, true) {
			return
		}
		fake.Set(epoch.Add(19 * time.Second))
		got, sinkErr = mem.Acquire(ctx, "x", "b", 10*time.Second)
	}))))
	defer svc.Close()
	mem = lease.Must(lock.NewMemory(svc, lock.WithLockDelay(5*time.Second)))
	p, err := mem.Acquire(ctx, "x", "a", 10*time.Second)
	require.NoError(t, err)
	fake.Set(epoch.Add(8 * time.Second))
	within(t, "Renew", func() {
		renewed, err := mem.Renew(ctx, []lock.Lease{*p}, 10*time.Second)
		assert.NoError(t, err)
		assert.Len(t, renewed, 1, "renewed at 8 s, before the sink moved time")
	})
	require.True(t, inSink.Load())
	require.NoError(t, sinkErr)
	assert.Nil(t, got, "acquired at 19 s, in the delay of a lease that expired at 18 s")

	for _, c := range []struct {
		at   time.Duration
		want bool
	}{{22 * time.Second, false}, {23 * time.Second, true}} {
		fake.Set(epoch.Add(c.at))
		l, err := mem.Acquire(ctx, "x", "b", 10*time.Second)
		require.NoError(t, err)
		assert.Equal(t, c.want, l != nil, "at %v", c.at)
	}
}

// A lease that expires between Release's lookup and its revocation was not
// released: its lock keeps its delay. The expiry of another lease, settled
// during the lookup, runs an audit sink that moves time past the lease's
// expiry.
func TestMemoryReleaseOfAnExpiredLeaseKeepsItsDelay(t *testing.T) {
	ctx := context.Background()
	fake := leasetest.NewFakeClock(epoch)
	var q *lock.Lease
	var moved atomic.Bool
	svc := lease.Must(lease.New(lease.WithClock(leasetest.Stalled(fake)), lease.WithAuditObserver(lease.ObserverFunc[lease.Decision](func(d lease.Decision) {
		if q != nil && d.LeaseID == lease.ID(q.Token) && d.Action == lease.ActionExpire && moved.CompareAndSwap(false, true) {
			fake.Set(epoch.Add(11 * time.Second))
		}
	}))))
	defer svc.Close()
	mem := lease.Must(lock.NewMemory(svc, lock.WithLockDelay(5*time.Second)))
	p, err := mem.Acquire(ctx, "x", "a", 10*time.Second)
	require.NoError(t, err)
	q, err = mem.Acquire(ctx, "y", "a", 5*time.Second)
	require.NoError(t, err)
	fake.Set(epoch.Add(6 * time.Second))
	require.NoError(t, mem.Release(ctx, []lock.Lease{*p}))
	require.True(t, moved.Load())
	got, err := mem.Acquire(ctx, "x", "b", 10*time.Second)
	require.NoError(t, err)
	assert.Nil(t, got, "at 11 s, the lease that expired at 10 s keeps x in its delay")
}
