package lock_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

func TestLockDelay(t *testing.T) {
	const d, delay = 10 * time.Second, 5 * time.Second
	cases := []struct {
		name    string
		stalled bool          // the service's timer never fires
		renewAt time.Duration // renew once at this offset, if > 0
		release bool          // release instead of letting it expire
		at      time.Duration // when the next Acquire is tried
		want    bool          // whether it acquires
	}{
		{name: "before expiry", at: d - 1},
		{name: "at expiry", at: d},
		{name: "within the delay", at: d + delay - 1},
		{name: "at the end of the delay", at: d + delay, want: true},
		{name: "stalled timer, within the delay", stalled: true, at: d + delay - 1},
		{name: "stalled timer, at the end of the delay", stalled: true, at: d + delay, want: true},
		{name: "renewed, counted from the new expiry", renewAt: 4 * time.Second, at: 4*time.Second + d + delay - 1},
		{name: "renewed, over", renewAt: 4 * time.Second, at: 4*time.Second + d + delay, want: true},
		{name: "released: no delay", release: true, at: 1, want: true},
		{name: "released, stalled: no delay", stalled: true, release: true, at: 1, want: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			fake := leasetest.NewFakeClock(epoch)
			var clock lease.Clock = fake
			if c.stalled {
				clock = leasetest.Stalled(fake)
			}
			svc := lease.Must(lease.New(lease.WithClock(clock)))
			defer svc.Close()
			mem := lease.Must(lock.NewMemory(svc, lock.WithLockDelay(delay)))
			l, err := mem.Acquire(ctx, "job", "a", d)
			require.NoError(t, err)
			require.NotNil(t, l)
			if c.renewAt > 0 {
				fake.Advance(c.renewAt)
				got, err := mem.Renew(ctx, []lock.Lease{*l}, d)
				require.NoError(t, err)
				require.Len(t, got, 1)
			}
			if c.release {
				require.NoError(t, mem.Release(ctx, []lock.Lease{*l}))
			}
			fake.Set(epoch.Add(c.at))
			got, err := mem.Acquire(ctx, "job", "b", d)
			require.NoError(t, err)
			assert.Equal(t, c.want, got != nil)
		})
	}
}

// Many names expiring one after another make the record of expiries sweep
// itself many times; only the records whose delay is over may go.
func TestLockDelayManyNames(t *testing.T) {
	ctx := context.Background()
	svc, clock := newFakeService(t)
	mem := lease.Must(lock.NewMemory(svc, lock.WithLockDelay(time.Second)))
	for i := range 1000 {
		_, err := mem.Acquire(ctx, "n"+itoa(i), "a", time.Second)
		require.NoError(t, err)
		clock.Advance(time.Second / 2)
	}
	// At 500 s, name i expired at i/2+1 s and its delay ends at i/2+2 s:
	// names up to 996 are free, 997 and 998 in their delay, 999 held.
	for i := range 1000 {
		l, err := mem.Acquire(ctx, "n"+itoa(i), "b", time.Second)
		require.NoError(t, err)
		assert.Equal(t, i <= 996, l != nil, "name %d", i)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestMemoryKeyPrefixAndPurpose(t *testing.T) {
	ctx := context.Background()
	svc, _ := newFakeService(t)
	mem := lease.Must(lock.NewMemory(svc, lock.WithKeyPrefix("locks:"), lock.WithPurpose(lease.StateWrite)))
	l, err := mem.Acquire(ctx, "job", "a", time.Minute)
	require.NoError(t, err)
	kv, err := svc.Scan(ctx, "locks:", 0)
	require.NoError(t, err)
	require.Len(t, kv, 1)
	assert.Equal(t, "locks:job", kv[0].Key)
	assert.Equal(t, "\x01a", string(kv[0].Value), "the execution ID's length, the execution ID, no value")
	assert.Equal(t, lease.ID(l.Token), kv[0].LeaseID, "the token is the lease ID")
	_, err = svc.Use(ctx, kv[0].LeaseID, lease.StateWrite)
	assert.NoError(t, err)
}

// A closed service is a provider failure, not contention nor a lock lost
// or freed: Acquire, Renew and Release all fail with an error matching
// lease.ErrClosed (code LS_CLOSED), with or without a lock-delay, whether
// the leases given are held or not.
func TestMemoryClosedService(t *testing.T) {
	for _, delay := range []time.Duration{0, time.Second} {
		t.Run("delay "+delay.String(), func(t *testing.T) {
			ctx := context.Background()
			svc, _ := newFakeService(t)
			mem := lease.Must(lock.NewMemory(svc, lock.WithLockDelay(delay)))
			l, err := mem.Acquire(ctx, "job", "a", time.Minute)
			require.NoError(t, err)
			stale := *l
			stale.Token++ // a lease the service never granted
			require.NoError(t, svc.Close())

			_, err = mem.Acquire(ctx, "other", "a", time.Minute)
			assertClosed(t, err, "Acquire")
			for _, leases := range [][]lock.Lease{{*l}, {stale}, nil} {
				got, err := mem.Renew(ctx, leases, time.Minute)
				assertClosed(t, err, "Renew")
				assert.Empty(t, got)
				assertClosed(t, mem.Release(ctx, leases), "Release")
			}
		})
	}
}

func assertClosed(t *testing.T, err error, op string) {
	t.Helper()
	assert.ErrorIs(t, err, lease.ErrClosed, op)
	assert.Equal(t, lease.CodeClosed, lease.CodeOf(err), op)
}

// A Manager whose service closes while fn runs reports the lock lost at
// the next renewal, and the final release's failure reaches the handler.
func TestManagerClosedService(t *testing.T) {
	svc, clock := newFakeService(t)
	var releaseErr error
	m := newManager(t, lease.Must(lock.NewMemory(svc)), lock.WithLeaseDuration(testLease),
		lock.WithReleaseErrorHandler(func(_ lock.Lease, err error) { releaseErr = err }))
	acquired, err := m.TryLock(context.Background(), "job", func(ctx context.Context, l lock.Lease) error {
		require.NoError(t, svc.Close())
		clock.Advance(testLease / 3)
		assert.Same(t, lock.ErrLockLost, context.Cause(ctx), "lost at the renewal after the close")
		return nil
	})
	assert.True(t, acquired)
	assert.ErrorIs(t, err, lock.ErrLockLost)
	assertClosed(t, releaseErr, "the final release")
}

// The service's TTL bounds apply: a d outside them is the service's
// invalid-argument error, and nothing changes.
func TestMemoryTTLBounds(t *testing.T) {
	ctx := context.Background()
	svc, _ := newFakeService(t, lease.WithTTLBounds(time.Second, time.Hour))
	mem := lease.Must(lock.NewMemory(svc))
	_, err := mem.Acquire(ctx, "job", "a", 2*time.Hour)
	assert.ErrorIs(t, err, lease.ErrInvalidArgument)
	l, err := mem.Acquire(ctx, "job", "a", time.Minute)
	require.NoError(t, err)
	require.NotNil(t, l)
	_, err = mem.Renew(ctx, []lock.Lease{*l}, 2*time.Hour)
	assert.ErrorIs(t, err, lease.ErrInvalidArgument)
}
