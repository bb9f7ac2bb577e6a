package lock_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// waitEnv is a Memory on a service on a fake clock, made inside a synctest
// bubble so that synctest.Wait tells when every waiter is blocked.
type waitEnv struct {
	clock *leasetest.FakeClock
	svc   *lease.Service
	mem   *lock.Memory

	mu    sync.Mutex
	order []string // who ran under the lock, in order
}

func newWaitEnv(t *testing.T, opts ...lock.MemoryOption) *waitEnv {
	t.Helper()
	clock := leasetest.NewFakeClock(epoch)
	svc := lease.Must(lease.New(lease.WithClock(clock)))
	t.Cleanup(func() { _ = svc.Close() })
	return &waitEnv{clock: clock, svc: svc, mem: lease.Must(lock.NewMemory(svc, opts...))}
}

func (e *waitEnv) manager(t *testing.T, id string, opts ...lock.Option) *lock.Manager {
	t.Helper()
	return newManager(t, e.mem, append([]lock.Option{lock.WithExecutionID(id), lock.WithLeaseDuration(testLease)}, opts...)...)
}

// hold acquires name as exec with a lease of d, directly on the Memory.
func (e *waitEnv) hold(t *testing.T, name, exec string, d time.Duration) lock.Lease {
	t.Helper()
	l, err := e.mem.Acquire(context.Background(), name, exec, d)
	require.NoError(t, err)
	require.NotNil(t, l)
	return *l
}

// lock starts m.Lock(ctx, name) on a goroutine, whose function records m's
// execution ID, and returns once it waits; its outcome arrives on the
// channel.
func (e *waitEnv) lock(ctx context.Context, m *lock.Manager, name string) <-chan error {
	done := make(chan error, 1)
	go func() {
		done <- m.Lock(ctx, name, func(ctx context.Context, l lock.Lease) error {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.order = append(e.order, l.ExecutionID)
			return ctx.Err()
		})
	}()
	synctest.Wait()
	return done
}

func (e *waitEnv) ran() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.order...)
}

// ready reports whether done has a value, and checks it.
func ready(t *testing.T, done <-chan error, want error) bool {
	t.Helper()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, want)
		if want == nil {
			assert.NoError(t, err)
		}
		return true
	default:
		return false
	}
}

func TestLockHandOffOnReleaseIsFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newWaitEnv(t)
		held := e.hold(t, "x", "holder", time.Hour)
		var done []<-chan error
		for _, id := range []string{"w1", "w2", "w3"} {
			done = append(done, e.lock(context.Background(), e.manager(t, id), "x"))
		}
		assert.Equal(t, 3, lock.WaitingCount(e.mem, "x"))
		assert.Empty(t, e.ran(), "nobody runs while the lock is held")

		require.NoError(t, e.mem.Release(context.Background(), []lock.Lease{held}))
		synctest.Wait()
		for _, d := range done {
			assert.True(t, ready(t, d, nil))
		}
		assert.Equal(t, []string{"w1", "w2", "w3"}, e.ran(), "the longest waiter first")
		assert.Zero(t, lock.WaitingCount(e.mem, "x"))
	})
}

func TestLockHandOffOnExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newWaitEnv(t)
		e.hold(t, "x", "holder", 10*time.Second) // never renewed
		done := e.lock(context.Background(), e.manager(t, "w"), "x")

		e.clock.Advance(10*time.Second - time.Nanosecond)
		synctest.Wait()
		assert.False(t, ready(t, done, nil), "held until its expiry")
		e.clock.Advance(time.Nanosecond)
		synctest.Wait()
		assert.True(t, ready(t, done, nil), "woken by the expiry")
		assert.Equal(t, []string{"w"}, e.ran())
	})
}

func TestLockWaitsOutTheLockDelay(t *testing.T) {
	for _, arrives := range []string{"before the expiry", "during the delay"} {
		t.Run(arrives, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newWaitEnv(t, lock.WithLockDelay(5*time.Second))
				e.hold(t, "x", "holder", 10*time.Second)
				m := e.manager(t, "w")
				var done <-chan error
				if arrives == "before the expiry" {
					done = e.lock(context.Background(), m, "x")
					e.clock.Advance(10 * time.Second)
				} else {
					e.clock.Advance(12 * time.Second)
					done = e.lock(context.Background(), m, "x")
				}
				synctest.Wait()
				assert.False(t, ready(t, done, nil), "in the delay")
				e.clock.Set(epoch.Add(15*time.Second - time.Nanosecond))
				synctest.Wait()
				assert.False(t, ready(t, done, nil), "a nanosecond before the delay ends")
				e.clock.Advance(time.Nanosecond)
				synctest.Wait()
				assert.True(t, ready(t, done, nil), "woken when the delay ends")
			})
		})
	}
}

// A waiter whose context ends leaves the queue, returns ctx's error without
// running its function, and nobody loses a turn: not when it is in the
// middle of the queue, nor when it is first.
func TestLockContextEndLeavesTheQueue(t *testing.T) {
	for _, leaving := range []string{"w1", "w2", "w3"} {
		t.Run(leaving, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newWaitEnv(t)
				held := e.hold(t, "x", "holder", time.Hour)
				var cancel context.CancelFunc
				done := map[string]<-chan error{}
				var want []string
				for _, id := range []string{"w1", "w2", "w3"} {
					ctx := context.Background()
					if id == leaving {
						ctx, cancel = context.WithCancel(ctx)
					} else {
						want = append(want, id)
					}
					done[id] = e.lock(ctx, e.manager(t, id), "x")
				}
				cancel()
				synctest.Wait()
				assert.True(t, ready(t, done[leaving], context.Canceled))
				assert.Equal(t, 2, lock.WaitingCount(e.mem, "x"))

				require.NoError(t, e.mem.Release(context.Background(), []lock.Lease{held}))
				synctest.Wait()
				for _, id := range want {
					assert.True(t, ready(t, done[id], nil), id)
				}
				assert.Equal(t, want, e.ran())
			})
		})
	}
}

// The first waiter's turn comes while its context ends: the next one gets
// the lock.
func TestLockFirstWaiterLeavingPassesTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newWaitEnv(t)
		held := e.hold(t, "x", "holder", time.Hour)
		ctx, cancel := context.WithCancel(context.Background())
		first := make(chan error, 1)
		go func() {
			_, err := e.mem.AcquireWait(ctx, "x", "w1", time.Minute)
			first <- err
		}()
		synctest.Wait()
		second := e.lock(context.Background(), e.manager(t, "w2"), "x")
		// Release wakes w1; w1's context ends before it runs.
		cancel()
		require.NoError(t, e.mem.Release(context.Background(), []lock.Lease{held}))
		synctest.Wait()
		select {
		case err := <-first:
			if err != nil {
				assert.ErrorIs(t, err, context.Canceled)
			}
		default:
			t.Fatal("w1 still waits")
		}
		assert.True(t, ready(t, second, nil))
		assert.Equal(t, []string{"w2"}, e.ran())
	})
}

// Whichever wins the race of a release and the end of a waiter's context,
// a waiter that returns an error does not hold the lock. On the system
// clock, racing for real.
func TestLockWaiterHoldsNothingAfterItsContextEnds(t *testing.T) {
	svc := lease.Must(lease.New())
	defer svc.Close()
	mem := lease.Must(lock.NewMemory(svc))
	m := newManager(t, mem, lock.WithExecutionID("w"))
	for i := 0; i < 200; i++ {
		held, err := mem.Acquire(context.Background(), "x", "holder", time.Minute)
		require.NoError(t, err)
		require.NotNil(t, held)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		ran := false
		go func() {
			done <- m.Lock(ctx, "x", func(context.Context, lock.Lease) error { ran = true; return nil })
		}()
		for lock.WaitingCount(mem, "x") == 0 && i%2 == 0 {
			select {
			case err := <-done:
				t.Fatalf("Lock returned while the lock was held: %v", err)
			default:
			}
			runtime.Gosched()
		}
		go cancel()
		require.NoError(t, mem.Release(context.Background(), []lock.Lease{*held}))
		err = <-done
		if err != nil {
			require.ErrorIs(t, err, context.Canceled)
			require.False(t, ran)
		}
		probe, perr := mem.Acquire(context.Background(), "x", "probe", time.Minute)
		require.NoError(t, perr)
		require.NotNil(t, probe, "round %d: the lock is free after Lock returned (err %v)", i, err)
		require.NoError(t, mem.Release(context.Background(), []lock.Lease{*probe}))
		cancel()
	}
}

// A provider that is not a Waiter is polled every lockprovider.PollInterval on the
// Manager's clock.
func TestLockPollsAProviderThatCannotWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newWaitEnv(t)
		p := &scripted{Provider: e.mem} // hides AcquireWait
		m := newManager(t, p, lease.WithClock(e.clock), lock.WithExecutionID("w"), lock.WithLeaseDuration(testLease))
		held := e.hold(t, "x", "holder", time.Hour)
		done := e.lock(context.Background(), m, "x")
		require.NoError(t, e.mem.Release(context.Background(), []lock.Lease{held}))
		synctest.Wait()
		assert.False(t, ready(t, done, nil), "not woken: polled")
		require.Equal(t, 3*time.Second, lockprovider.PollInterval(testLease))
		e.clock.Advance(3*time.Second - time.Nanosecond)
		synctest.Wait()
		assert.False(t, ready(t, done, nil))
		e.clock.Advance(time.Nanosecond)
		synctest.Wait()
		assert.True(t, ready(t, done, nil), "the next poll acquires")
		assert.Equal(t, 10*time.Millisecond, lockprovider.PollInterval(time.Millisecond), "at least 10 ms")
	})
}

func TestLockWaiterSeesTheServiceClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newWaitEnv(t)
		e.hold(t, "x", "holder", time.Hour)
		done := e.lock(context.Background(), e.manager(t, "w"), "x")
		require.NoError(t, e.svc.Close())
		synctest.Wait()
		assert.True(t, ready(t, done, lease.ErrClosed))
	})
}

func TestLockBadInput(t *testing.T) {
	e := newWaitEnv(t)
	m := e.manager(t, "w")
	ctx := context.Background()
	for _, c := range []struct {
		name, field string
		err         error
	}{
		{"nil fn", "fn", m.Lock(ctx, "x", nil)},
		{"empty name", "name", m.Lock(ctx, "", func(context.Context, lock.Lease) error { return nil })},
		{"value too long", "value", func() error {
			_, err := e.mem.AcquireWaitValue(ctx, "x", "w", time.Minute, make([]byte, lock.MaxValueSize+1))
			return err
		}()},
		{"empty executionID", "executionID", func() error {
			_, err := e.mem.AcquireWait(ctx, "x", "", time.Minute)
			return err
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			var le *lease.Error
			require.True(t, errors.As(c.err, &le), "%v", c.err)
			assert.ErrorIs(t, c.err, lease.ErrInvalidArgument)
			assert.Equal(t, c.field, le.Field)
		})
	}
	assert.Zero(t, lock.WaitingCount(e.mem, "x"))
}

// Lock while the lock is free acquires at once, like TryLock, and DoWait
// returns what the function returned.
func TestDoWaitOnAFreeLock(t *testing.T) {
	e := newWaitEnv(t)
	m := e.manager(t, "w")
	r, err := lock.DoWait(context.Background(), m, "x", func(_ context.Context, l lock.Lease) (uint64, error) {
		return l.Token, nil
	})
	require.NoError(t, err)
	assert.True(t, r.Acquired)
	assert.NotZero(t, r.Value)
	_, err = lock.DoWait(context.Background(), m, "x", func(ctx context.Context, l lock.Lease) (int, error) {
		assert.Equal(t, epoch.Add(testLease), l.ExpiresAt)
		e.clock.Advance(testLease) // renewed all along
		return 0, ctx.Err()
	})
	assert.NoError(t, err)
}
