package claim_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

// The worker runs on the real clock, inside a synctest bubble: time moves
// only when every goroutine of the bubble is blocked, so nothing sleeps.

// startWork runs b.Work in the bubble and returns a function that stops it
// and returns Work's error.
func startWork(t *testing.T, b *claim.Broker, w claim.Worker) (stop func() error) {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Work(wctx, w) }()
	return func() error {
		cancel()
		return <-done
	}
}

// newRealBroker returns a Broker on a service on the system clock (the
// bubble's fake time inside synctest).
func newRealBroker(t *testing.T, opts ...claim.Option) (*claim.Broker, *lease.Service) {
	t.Helper()
	svc := lease.Must(lease.New())
	b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc)), opts...))
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, svc.Close())
	})
	return b, svc
}

func TestWorkCompletesItemsWithConcurrentWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		var (
			mu      sync.Mutex
			owners  = map[string]int{}
			running int
			peak    int
			release = make(chan struct{})
		)
		stop := startWork(t, b, claim.Worker{Queue: q, Concurrency: 3, Owner: "pool", Handler: func(_ context.Context, c claim.Claim) error {
			mu.Lock()
			owners[c.Owner]++
			running++
			peak = max(peak, running)
			mu.Unlock()
			<-release
			mu.Lock()
			running--
			mu.Unlock()
			return nil
		}})
		for range 6 {
			enqueue(t, b, q, "p")
		}
		synctest.Wait()
		assert.Equal(t, counts(3, 0, 3, 0), countsOf(t, b, q), "three workers, one item each")
		close(release)
		synctest.Wait()
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
		require.NoError(t, stop())
		assert.Equal(t, 3, peak)
		var total int
		for owner, n := range owners {
			assert.Equal(t, "pool", owner)
			total += n
		}
		assert.Equal(t, 6, total)
	})
}

func TestWorkHeartbeatsWhileTheHandlerRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, svc := newRealBroker(t)
		const d = 3 * time.Second
		claims := make(chan claim.Claim, 10)
		stop := startWork(t, b, claim.Worker{Queue: q, Concurrency: 2, LeaseDuration: d, Handler: func(ctx context.Context, c claim.Claim) error {
			claims <- c
			select {
			case <-time.After(10 * d):
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}})
		it := enqueue(t, b, q, "slow")
		start := time.Now()
		c := <-claims

		<-time.After(5 * d)
		synctest.Wait()
		assert.Equal(t, counts(0, 0, 1, 0), countsOf(t, b, q), "still claimed long after its first lease")
		l, err := svc.Info(ctx, lease.ID(c.Ref.Token))
		require.NoError(t, err)
		assert.Equal(t, start.Add(5*d+d), l.ExpiresAt, "renewed every d/3, the last one just now")
		assert.Equal(t, start.Add(5*d), l.RenewedAt)

		<-time.After(5 * d)
		synctest.Wait()
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
		require.NoError(t, stop())
		assert.Len(t, claims, 0, "never delivered twice")
		_, ok := lookup(t, b, it.ID)
		assert.False(t, ok)
	})
}

func TestWorkFailsOnErrorOrPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reported leasetest.PanicRecorder
		b, _ := newRealBroker(t, claim.WithMaxAttempts(1), lease.WithPanicHandler(reported.Handle))
		stop := startWork(t, b, claim.Worker{Queue: q, Handler: func(_ context.Context, c claim.Claim) error {
			switch string(c.Payload) {
			case "error":
				return errors.New("boom")
			case "panic":
				panic("kaboom")
			}
			return nil
		}})
		e := enqueue(t, b, q, "error")
		p := enqueue(t, b, q, "panic")
		enqueue(t, b, q, "ok")
		synctest.Wait()
		require.NoError(t, stop())

		assert.Equal(t, counts(0, 0, 0, 2), countsOf(t, b, q))
		dead := listDead(t, b, q)
		require.Len(t, dead, 2)
		assert.Equal(t, e.ID, dead[0].ID)
		assert.Equal(t, "boom", dead[0].History[0].Reason)
		assert.Equal(t, p.ID, dead[1].ID)
		assert.Equal(t, "panic: kaboom", dead[1].History[0].Reason)
		assert.Len(t, reported.Panics(), 1)
	})
}

func TestWorkRetriesWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		type call struct {
			attempt int
			at      time.Time
		}
		var calls []call
		stop := startWork(t, b, claim.Worker{Queue: q, BaseDelay: time.Second, MaxDelay: time.Minute, Handler: func(_ context.Context, c claim.Claim) error {
			calls = append(calls, call{c.Attempt, time.Now()})
			if c.Attempt < 3 {
				return errors.New("not yet")
			}
			return nil
		}})
		start := time.Now()
		enqueue(t, b, q, "p")
		<-time.After(time.Minute)
		synctest.Wait()
		require.NoError(t, stop())
		assert.Equal(t, []call{{1, start}, {2, start.Add(time.Second)}, {3, start.Add(3 * time.Second)}}, calls)
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
	})
}

// TestWorkStopHandsBackTheItemAtTheStopTimeout: once Work's ctx is done a
// running handler keeps its context for StopTimeout; then it is cancelled
// (cause ErrStopped) and, as it returns an error, its claim is handed back
// at once, with no attempt spent and no failure recorded.
func TestWorkStopHandsBackTheItemAtTheStopTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, svc := newRealBroker(t)
		started := make(chan struct{})
		var cancelledAt time.Time
		var cause error
		stop := startWork(t, b, claim.Worker{Queue: q, Concurrency: 4, StopTimeout: 7 * time.Second,
			Handler: func(ctx context.Context, _ claim.Claim) error {
				close(started)
				<-ctx.Done()
				cancelledAt, cause = time.Now(), context.Cause(ctx)
				return ctx.Err()
			}})
		it := enqueue(t, b, q, "p")
		<-started
		stoppedAt := time.Now()
		require.NoError(t, stop())
		assert.Equal(t, 7*time.Second, cancelledAt.Sub(stoppedAt), "cancelled at the stop timeout, not before")
		require.ErrorIs(t, cause, claim.ErrStopped)

		got, ok := lookup(t, b, it.ID)
		require.True(t, ok)
		assert.Equal(t, claim.Visible, got.State, "handed back at once")
		assert.Zero(t, got.Attempts, "no attempt spent")
		assert.Empty(t, got.History)
		assert.Zero(t, svc.ActiveCount(), "no lease left behind")
	})
}

// TestWorkStopLetsAHandlerUnderWayFinish: a handler that finishes within
// the stop timeout completes its item, its context never cancelled.
func TestWorkStopLetsAHandlerUnderWayFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		started, finish := make(chan struct{}), make(chan struct{})
		var ctxErr error
		stop := startWork(t, b, claim.Worker{Queue: q, Handler: func(ctx context.Context, _ claim.Claim) error {
			close(started)
			<-finish
			ctxErr = ctx.Err()
			return nil
		}})
		enqueue(t, b, q, "p")
		<-started
		stopped := make(chan error, 1)
		go func() { stopped <- stop() }()
		synctest.Wait() // Work has stopped claiming and waits for the handler
		close(finish)
		require.NoError(t, <-stopped)
		require.NoError(t, ctxErr, "not cancelled: it finished in time")
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q), "completed")
	})
}

func TestWorkHandlerLearnsItsClaimWasLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, svc := newRealBroker(t)
		claims := make(chan claim.Claim, 1)
		causes := make(chan error, 1)
		stop := startWork(t, b, claim.Worker{Queue: q, LeaseDuration: 3 * time.Second, Handler: func(ctx context.Context, c claim.Claim) error {
			if c.Attempt > 1 {
				return nil
			}
			claims <- c
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return errors.New("gave up")
		}})
		it := enqueue(t, b, q, "p")
		c := <-claims
		_, err := svc.Revoke(ctx, lease.ID(c.Ref.Token))
		require.NoError(t, err)
		// The next heartbeat finds the claim stale and cancels the handler;
		// the item was requeued by the revocation and runs again.
		synctest.Wait()
		requireStale(t, <-causes)
		<-time.After(time.Second)
		synctest.Wait()
		require.NoError(t, stop())
		_, ok := lookup(t, b, it.ID)
		assert.False(t, ok, "completed on its second attempt")
	})
}

// TestWorkReturnsWhenTheBrokerOrServiceCloses: idle workers notice at
// once, the service's closing through its Done channel.
func TestWorkReturnsWhenTheBrokerOrServiceCloses(t *testing.T) {
	tests := []struct {
		name  string
		close func(*claim.Broker, *lease.Service) error
	}{
		{"broker", func(b *claim.Broker, _ *lease.Service) error { return b.Close() }},
		{"service", func(_ *claim.Broker, svc *lease.Service) error { return svc.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, svc := newRealBroker(t)
				done := make(chan error, 1)
				go func() { done <- b.Work(ctx, claim.Worker{Queue: q, Concurrency: 2, Handler: nopHandler}) }()
				synctest.Wait()
				require.NoError(t, tt.close(b, svc))
				requireCode(t, <-done, lease.CodeClosed, lease.ErrClosed)
			})
		})
	}
}

func TestWorkWakesForDelayedItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		at := make(chan time.Time, 1)
		stop := startWork(t, b, claim.Worker{Queue: q, Handler: func(context.Context, claim.Claim) error {
			at <- time.Now()
			return nil
		}})
		start := time.Now()
		enqueue(t, b, q, "p", claim.Delay(time.Hour))
		assert.Equal(t, start.Add(time.Hour), <-at)
		require.NoError(t, stop())
	})
}

// TestWorkHeartbeatsOnTheFakeClock: the heartbeat is a timer on the
// service's clock, so with a FakeClock it runs inside Advance.
func TestWorkHeartbeatsOnTheFakeClock(t *testing.T) {
	b, svc, clk := newBroker(t)
	started := make(chan claim.Claim)
	release := make(chan struct{})
	stop := startWork(t, b, claim.Worker{Queue: q, LeaseDuration: 3 * time.Second, Handler: func(_ context.Context, c claim.Claim) error {
		started <- c
		<-release
		return nil
	}})
	enqueue(t, b, q, "p")
	c := <-started
	for range 10 {
		clk.Advance(time.Second)
	}
	l, err := svc.Info(ctx, lease.ID(c.Ref.Token))
	require.NoError(t, err, "renewed every second")
	assert.Equal(t, t0.Add(13*time.Second), l.ExpiresAt)
	assert.Equal(t, counts(0, 0, 1, 0), countsOf(t, b, q))
	close(release)
	require.NoError(t, stop())
	assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
}

// TestWorkReturnsNilWhenCtxIsDone: Work stops for a done ctx without an
// error, whether ctx was done before it started or while it ran; a Worker
// it cannot run is still reported.
func TestWorkReturnsNilWhenCtxIsDone(t *testing.T) {
	b, _, _ := newBroker(t)
	enqueue(t, b, q, "p")
	done, cancel := context.WithCancel(ctx)
	cancel()
	ran := false
	require.NoError(t, b.Work(done, claim.Worker{Queue: q, Handler: func(context.Context, claim.Claim) error {
		ran = true
		return nil
	}}), "ctx done before Work started")
	assert.False(t, ran, "no claim is made for a done ctx")
	assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q))

	err := b.Work(done, claim.Worker{Queue: q})
	le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "handler", le.Field, "a bad Worker is reported even with a done ctx")

	stop := startWork(t, b, claim.Worker{Queue: q, Handler: nopHandler})
	require.NoError(t, stop(), "ctx done while Work ran")
}

// TestWorkRejectsALeaseTooShortToHeartbeat: a heartbeat every
// LeaseDuration/3 needs that to be at least a nanosecond, or the heartbeat
// timer would spin.
func TestWorkRejectsALeaseTooShortToHeartbeat(t *testing.T) {
	for _, d := range []time.Duration{1, 2} {
		t.Run(d.String(), func(t *testing.T) {
			b, svc, _ := newBroker(t)
			enqueue(t, b, q, "p")
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- b.Work(wctx, claim.Worker{Queue: q, Handler: nopHandler, LeaseDuration: d}) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				cancel()
				err = <-done
				t.Errorf("Work ran with a lease of %s", d)
			}
			le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
			assert.Equal(t, "lease_duration", le.Field)
			assert.Contains(t, err.Error(), d.String())
			assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q), "nothing changed")
			assert.Zero(t, svc.ActiveCount())
		})
	}
}

// With Prefetch, Work holds more items claimed than it has handlers: they
// wait for a handler, still claimed, and no more than Concurrency
// handlers ever run at once.
func TestWorkPrefetchHoldsItemsForBusyHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		var (
			mu      sync.Mutex
			running int
			peak    int
			release = make(chan struct{})
		)
		stop := startWork(t, b, claim.Worker{Queue: q, Concurrency: 2, Prefetch: 3, Handler: func(context.Context, claim.Claim) error {
			mu.Lock()
			running++
			peak = max(peak, running)
			mu.Unlock()
			<-release
			mu.Lock()
			running--
			mu.Unlock()
			return nil
		}})
		for range 7 {
			enqueue(t, b, q, "p")
		}
		synctest.Wait()
		assert.Equal(t, counts(2, 0, 5, 0), countsOf(t, b, q), "two running and three held")
		mu.Lock()
		assert.Equal(t, 2, running)
		mu.Unlock()
		close(release)
		synctest.Wait()
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
		require.NoError(t, stop())
		assert.Equal(t, 2, peak, "never more handlers than Concurrency")
	})
}

func TestWorkRejectsNegativePrefetch(t *testing.T) {
	b, _ := newRealBroker(t)
	err := b.Work(ctx, claim.Worker{Queue: q, Handler: nopHandler, Prefetch: -1})
	le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	assert.Equal(t, "prefetch", le.Field)
}
