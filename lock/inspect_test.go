package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

var _ lockprovider.Inspector = (*lock.Memory)(nil)

func TestMemoryHolderAndHeld(t *testing.T) {
	ctx := context.Background()
	e := newWaitEnv(t)
	m := e.manager(t, "me", lock.WithValue([]byte("host-1:8080")))
	_, err := m.TryLock(ctx, "jobs/a", func(ctx context.Context, l lock.Lease) error {
		h, ok, err := e.mem.Holder(ctx, "jobs/a")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, lock.Holding{Name: "jobs/a", ExecutionID: "me", Token: l.Token, ExpiresAt: l.ExpiresAt, Value: []byte("host-1:8080")}, h)

		b := e.hold(t, "jobs/b", "other", time.Minute)
		e.hold(t, "other", "other", time.Minute)
		all, err := e.mem.Held(ctx, "jobs/", 0)
		require.NoError(t, err)
		require.Len(t, all, 2, "in name order, under the prefix only")
		assert.Equal(t, h, all[0])
		assert.Equal(t, lock.Holding{Name: "jobs/b", ExecutionID: "other", Token: b.Token, ExpiresAt: b.ExpiresAt}, all[1])
		one, err := e.mem.Held(ctx, "", 1)
		require.NoError(t, err)
		assert.Equal(t, []lock.Holding{h}, one)

		// Copies: changing what came back changes nothing inside.
		h.Value[0] = 'X'
		all[0].Value[0] = 'Y'
		again, _, err := e.mem.Holder(ctx, "jobs/a")
		require.NoError(t, err)
		assert.Equal(t, []byte("host-1:8080"), again.Value)
		return nil
	})
	require.NoError(t, err)
	_, ok, err := e.mem.Holder(ctx, "jobs/a")
	require.NoError(t, err)
	assert.False(t, ok, "released")

	e.clock.Advance(time.Minute)
	all, err := e.mem.Held(ctx, "", 0)
	require.NoError(t, err)
	assert.Empty(t, all, "expired")
}

func TestMemoryInspectorBadInputAndClose(t *testing.T) {
	e := newWaitEnv(t)
	ctx := context.Background()
	_, _, err := e.mem.Holder(ctx, "")
	assertInvalid(t, err, "name")
	_, err = e.mem.Held(ctx, "", -1)
	assertInvalid(t, err, "limit")
	_, err = lock.NewManager(&scripted{Provider: e.mem}, lock.WithValue([]byte("v")))
	assertInvalid(t, err, "WithValue")
	_, err = lock.NewManager(e.mem, lock.WithValue(make([]byte, lock.MaxValueSize+1)))
	assertInvalid(t, err, "WithValue")
	_, err = e.mem.AcquireValue(ctx, "x", "a", time.Minute, make([]byte, lock.MaxValueSize+1))
	assertInvalid(t, err, "value")

	require.NoError(t, e.svc.Close())
	_, _, err = e.mem.Holder(ctx, "x")
	assert.ErrorIs(t, err, lease.ErrClosed)
	_, err = e.mem.Held(ctx, "", 0)
	assert.ErrorIs(t, err, lease.ErrClosed)
}

func assertInvalid(t *testing.T, err error, field string) {
	t.Helper()
	var le *lease.Error
	if assert.ErrorAs(t, err, &le) {
		assert.Equal(t, lease.CodeInvalidArgument, le.Code)
		assert.Equal(t, field, le.Field)
	}
}

// An ending subscriber may call the waiting and inspecting methods from
// the notification of a release or an expiry: nothing deadlocks, and a
// Lock of the freed lock acquires it.
func TestLockReentrantFromOnEnd(t *testing.T) {
	for _, trigger := range []string{"release", "expiry"} {
		for _, callee := range []string{"Lock", "TryLock", "Holder", "Held", "AcquireWait"} {
			t.Run(trigger+"/"+callee, func(t *testing.T) {
				ctx := context.Background()
				e := newWaitEnv(t)
				m := e.manager(t, "sub")
				held := e.hold(t, "x", "holder", 10*time.Second)
				ran := make(chan error, 1)
				stop := e.svc.OnEnd(func(l lease.Lease, _ lease.EndReason) {
					if l.ID != lease.ID(held.Token) {
						return
					}
					var err error
					switch callee {
					case "Lock":
						err = m.Lock(ctx, "x", func(context.Context, lock.Lease) error { return nil })
					case "TryLock":
						var ok bool
						ok, err = m.TryLock(ctx, "x", func(context.Context, lock.Lease) error { return nil })
						assert.True(t, ok)
					case "Holder":
						_, _, err = e.mem.Holder(ctx, "x")
					case "Held":
						_, err = e.mem.Held(ctx, "", 0)
					case "AcquireWait":
						var l *lock.Lease
						l, err = e.mem.AcquireWait(ctx, "x", "sub", time.Minute)
						if err == nil {
							err = e.mem.Release(ctx, []lock.Lease{*l})
						}
					}
					ran <- err
				})
				defer stop()
				within(t, trigger, func() {
					if trigger == "release" {
						assert.NoError(t, e.mem.Release(ctx, []lock.Lease{held}))
					} else {
						e.clock.Advance(10 * time.Second)
					}
				})
				select {
				case err := <-ran:
					assert.NoError(t, err)
				default:
					t.Fatal("the subscriber did not run")
				}
			})
		}
	}
}
