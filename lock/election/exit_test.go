package election_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

// silent is a Memory that stops answering when told to, as a store behind
// a network cut: from then on every call blocks until its context is
// done, and returns its error.
type silent struct {
	*lock.Memory
	cut atomic.Bool
}

// hang reports whether the store is cut off, and if so blocks until ctx is
// done.
func (s *silent) hang(ctx context.Context) bool {
	if !s.cut.Load() {
		return false
	}
	<-ctx.Done()
	return true
}

func (s *silent) AcquireWait(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	return s.AcquireWaitValue(ctx, name, executionID, d, nil)
}

func (s *silent) AcquireWaitValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	if s.hang(ctx) {
		return nil, ctx.Err()
	}
	return s.Memory.AcquireWaitValue(ctx, name, executionID, d, value)
}

func (s *silent) Renew(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
	if s.hang(ctx) {
		return nil, ctx.Err()
	}
	return s.Memory.Renew(ctx, leases, d)
}

func (s *silent) Release(ctx context.Context, leases []lock.Lease) error {
	if s.hang(ctx) {
		return ctx.Err()
	}
	return s.Memory.Release(ctx, leases)
}

func (s *silent) Holder(ctx context.Context, name string) (lock.Holding, bool, error) {
	if s.hang(ctx) {
		return lock.Holding{}, false, ctx.Err()
	}
	return s.Memory.Holder(ctx, name)
}

// The schedule of the silent-store tests: renewals every 10 s, the safety
// deadline 27 s after the lock was taken, and 3 s for a call on the way
// out.
const (
	silentLease    = 30 * time.Second
	silentDeadline = silentLease - silentLease/10
	silentRetry    = silentLease / 10
)

// runSilent starts Run on a silent store inside a synctest bubble, every
// callback reporting on a channel, with OnNewLeader on so that Observe's
// polls meet the silence too.
type silentRun struct {
	store   *silent
	cancel  context.CancelFunc
	done    chan error
	started chan *election.Leadership
	stopped chan time.Time
}

func runSilent(t *testing.T) *silentRun {
	svc := lease.Must(lease.New())
	t.Cleanup(func() { _ = svc.Close() })
	r := &silentRun{
		store:   &silent{Memory: lease.Must(lock.NewMemory(svc))},
		done:    make(chan error, 1),
		started: make(chan *election.Leadership, 4),
		stopped: make(chan time.Time, 4),
	}
	el, err := election.New(r.store, "e", election.WithLeaseDuration(silentLease), election.WithPollInterval(time.Second))
	require.NoError(t, err)
	var ctx context.Context
	ctx, r.cancel = context.WithCancel(context.Background())
	go func() {
		r.done <- el.Run(ctx, []byte("a"), election.Callbacks{
			OnStartedLeading: func(ctx context.Context, ld *election.Leadership) {
				r.started <- ld
				<-ctx.Done()
			},
			OnStoppedLeading: func() { r.stopped <- time.Now() },
			OnNewLeader:      func(election.Leader) {},
		})
	}()
	return r
}

// A leader whose store stops answering loses its leadership at the safety
// deadline, and OnStoppedLeading follows within the retry interval, the
// bound of the release that cannot get through; Run then campaigns on, and
// returns as soon as its context is cancelled.
func TestRunStopsLeadingWhileTheStoreIsSilent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := runSilent(t)
		ld := <-r.started
		won := time.Now()
		r.store.cut.Store(true)

		<-ld.Context().Done()
		assert.Equal(t, silentDeadline, time.Since(won), "lost at the safety deadline")
		assert.ErrorIs(t, context.Cause(ld.Context()), election.ErrLeadershipLost)
		stopped := <-r.stopped
		assert.Equal(t, silentDeadline+silentRetry, stopped.Sub(won), "OnStoppedLeading once the release's bound passed")

		// Run campaigns again, into the silence, until it is cancelled.
		synctest.Wait()
		cancelled := time.Now()
		r.cancel()
		require.ErrorIs(t, <-r.done, context.Canceled)
		assert.Zero(t, time.Since(cancelled), "Run returned at once")
	})
}

// A leader cancelled while its store is silent (a renewal hanging) returns
// from Run within the retry interval, after OnStoppedLeading.
func TestRunReturnsWhenCancelledWhileTheStoreIsSilent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := runSilent(t)
		ld := <-r.started
		r.store.cut.Store(true)
		<-time.After(silentLease / 2) // the bubble's time: past the first renewal, which hangs
		synctest.Wait()
		cancelled := time.Now()
		r.cancel()
		require.ErrorIs(t, <-r.done, context.Canceled)
		assert.Equal(t, silentRetry, time.Since(cancelled), "Run returned once the release's bound passed")
		assert.ErrorIs(t, context.Cause(ld.Context()), context.Canceled)
		select {
		case <-r.stopped:
		default:
			t.Error("Run returned before OnStoppedLeading")
		}
	})
}

// Resign on a silent store returns within the retry interval, with the
// release's deadline as its error.
func TestResignIsBoundedWhileTheStoreIsSilent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := lease.Must(lease.New())
		defer svc.Close()
		s := &silent{Memory: lease.Must(lock.NewMemory(svc))}
		el, err := election.New(s, "e", election.WithLeaseDuration(silentLease))
		require.NoError(t, err)
		ld, err := el.Campaign(context.Background(), nil)
		require.NoError(t, err)
		s.cut.Store(true)
		start := time.Now()
		err = ld.Resign(context.Background())
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, silentRetry, time.Since(start))
	})
}
