package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// clocked is a scripted provider that keeps the time base of the Memory it
// wraps, as a wrapping provider should.
type clocked struct {
	*scripted
	svc *lease.Service
}

func (c clocked) Clock() lease.Clock { return c.svc.Clock() }

// A wall clock stepped back, before or while a Manager over a Memory holds
// a lock, neither makes it report the lock lost before the safety margin
// of the lease the service granted, nor lets another execution take the
// lock while the Manager still reports it held: the Manager reads the
// service's time base, on which a step back is time standing still.
func TestManagerClockSteppedBack(t *testing.T) {
	for _, renewals := range []string{"fail", "succeed"} {
		t.Run("renewals "+renewals, func(t *testing.T) {
			svc, clock := newFakeService(t)
			p := clocked{&scripted{Provider: lease.Must(lock.NewMemory(svc))}, svc}
			m := newManager(t, p, lock.WithLeaseDuration(testLease), lock.WithExecutionID("me"))
			if renewals == "fail" {
				p.setRenew(errFailing)
			}
			at := func() time.Duration { return svc.Clock().Now().Sub(epoch) } // the service's time
			clock.Advance(20 * time.Second)
			require.Equal(t, 20*time.Second, at())
			clock.Rewind(10 * time.Second) // before the lock is taken

			acquired, err := m.TryLock(context.Background(), "job", func(ctx context.Context, l lock.Lease) error {
				require.Equal(t, epoch.Add(50*time.Second), l.ExpiresAt, "granted at 20 s on the service's time")
				for step := 1; step <= 120; step++ {
					if step == 20 {
						clock.Rewind(15 * time.Second) // and while it is held
					}
					clock.Advance(time.Second)
					lost := ctx.Err() != nil
					if renewals == "succeed" || at() < 47*time.Second {
						require.False(t, lost, "lost early, at %v on the service's time (step %d)", at(), step)
					}
					if !lost {
						require.True(t, p.held(t, "job"), "taken over at %v while the Manager holds it (step %d)", at(), step)
					}
					if renewals == "fail" && at() >= 47*time.Second {
						require.True(t, lost, "still held at %v, past the safety deadline of 47 s", at())
						return nil
					}
				}
				return nil
			})
			assert.True(t, acquired)
			if renewals == "fail" {
				assert.ErrorIs(t, err, lock.ErrLockLost)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// held reports whether name is held, by probing with another execution.
func (c clocked) held(t *testing.T, name string) bool {
	t.Helper()
	l, err := c.scripted.Provider.Acquire(context.Background(), name, "prober", time.Second)
	require.NoError(t, err)
	if l == nil {
		return true
	}
	require.NoError(t, c.scripted.Provider.Release(context.Background(), []lock.Lease{*l}))
	return false
}
