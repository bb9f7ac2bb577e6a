package election_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

var ctx = context.Background()

// A leadership is a held lock: losing one is losing the other.
func TestLeadershipLostIsLockLost(t *testing.T) {
	assert.ErrorIs(t, election.ErrLeadershipLost, lock.ErrLockLost)
}

// The errors of the schedule name New as their operation and the option at
// fault, whichever layer found them.
func TestNewErrorsNameNew(t *testing.T) {
	m, _ := newFakeMemory(t)
	_, err := election.New(m, "e", election.WithLeaseDuration(time.Second), election.WithSafetyMargin(time.Second))
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "New", le.Op)
	assert.Equal(t, "WithSafetyMargin", le.Field)
	assert.Contains(t, le.Detail, "safety margin 1s")

	_, err = election.New(m, "e", election.WithLeaseDuration(time.Minute))
	require.NoError(t, err, "the default retry fits")
	_, err = election.New(m, "e", election.WithLeaseDuration(time.Minute), election.WithSafetyMargin(39*time.Second))
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "WithRetryInterval", le.Field, "the default retry no longer lands: %v", err)
}

// Bad configuration is refused by New with an error naming the option,
// never by a panic in the option constructor.
func TestNewRefusesBadOptions(t *testing.T) {
	m, _ := newFakeMemory(t)
	for _, tc := range []struct {
		option string
		opt    func() election.Option
	}{
		{"WithLeaseDuration", func() election.Option { return election.WithLeaseDuration(0) }},
		{"WithSafetyMargin", func() election.Option { return election.WithSafetyMargin(-1) }},
		{"WithRetryInterval", func() election.Option { return election.WithRetryInterval(0) }},
		{"WithPollInterval", func() election.Option { return election.WithPollInterval(-1) }},
		{"WithClock", func() election.Option { return lease.WithClock(nil) }},
		{"WithPanicHandler", func() election.Option { return lease.WithPanicHandler(nil) }},
		{"WithObserver", func() election.Option { return election.WithObserver(nil) }},
	} {
		var opt election.Option
		require.NotPanics(t, func() { opt = tc.opt() }, tc.option)
		_, err := election.New(m, "e", opt)
		var le *lease.Error
		require.ErrorAs(t, err, &le, tc.option)
		assert.Equal(t, lease.CodeInvalidArgument, le.Code, tc.option)
		assert.Equal(t, tc.option, le.Field)
		assert.Equal(t, "election", le.Package)
	}
}

// A lock held by something other than a candidate (a plain Manager) is a
// leader without a value, as is one whose execution ID only looks like a
// candidate's.
func TestForeignHolderHasNoValue(t *testing.T) {
	svc, _ := newFakeService(t)
	mem := lease.Must(lock.NewMemory(svc))
	el, err := election.New(mem, "e")
	require.NoError(t, err)
	for _, id := range []string{"worker-1", "0123.not base64!", "0123."} {
		l, err := mem.Acquire(ctx, "e", id, time.Minute)
		require.NoError(t, err)
		require.NotNil(t, l)
		got, err := el.Leader(ctx)
		require.NoError(t, err)
		assert.Nil(t, got.Value, "execution ID %q", id)
		assert.Equal(t, l.Token, got.Token)
		require.NoError(t, mem.Release(ctx, []lock.Lease{*l}))
	}
}

// On a provider that stores values the candidate's value is the holding's
// too, for lockprovider.Inspector users.
func TestValueIsTheHoldingsOnAValueAcquirer(t *testing.T) {
	m, _ := newFakeMemory(t)
	el, err := election.New(m, "e")
	require.NoError(t, err)
	ld, err := el.Campaign(ctx, []byte("host-a"))
	require.NoError(t, err)
	defer ld.Resign(ctx)
	h, ok, err := m.Holder(ctx, "e")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []byte("host-a"), h.Value)
}

// Run's callbacks run under the panic policy: a panic is reported, and Run
// goes on as if the callback had returned.
func TestRunReportsCallbackPanics(t *testing.T) {
	m, clock := newFakeMemory(t)
	var rec leasetest.PanicRecorder
	el, err := election.New(m, "e", lease.WithPanicHandler(rec.Handle), election.WithPollInterval(time.Second))
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		done <- el.Run(runCtx, []byte("a"), election.Callbacks{
			OnStartedLeading: func(context.Context, *election.Leadership) { close(started); panic("started") },
			OnStoppedLeading: func() { panic("stopped") },
			OnNewLeader:      func(election.Leader) { panic(errors.New("new leader")) },
		})
	}()
	<-started
	clock.Advance(time.Second) // a poll: the new leader
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assert.ElementsMatch(t, []string{"on started leading", "on new leader", "on stopped leading"}, rec.Callbacks())
}

// flaky is a Memory whose AcquireWait fails a number of times first.
type flaky struct {
	*lock.Memory
	failures atomic.Int32
}

func (f *flaky) AcquireWait(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	return f.AcquireWaitValue(ctx, name, executionID, d, nil)
}

func (f *flaky) AcquireWaitValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	if f.failures.Add(-1) >= 0 {
		return nil, errors.New("unreachable")
	}
	return f.Memory.AcquireWaitValue(ctx, name, executionID, d, value)
}

// Run campaigns again, after the retry interval, when a campaign fails.
func TestRunRetriesFailedCampaigns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := lease.Must(lease.New())
		defer svc.Close()
		p := &flaky{Memory: lease.Must(lock.NewMemory(svc))}
		p.failures.Store(2)
		el, err := election.New(p, "e", election.WithLeaseDuration(30*time.Second), election.WithRetryInterval(time.Second))
		require.NoError(t, err)
		runCtx, cancel := context.WithCancel(ctx)
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			done <- el.Run(runCtx, nil, election.Callbacks{OnStartedLeading: func(ctx context.Context, _ *election.Leadership) {
				assert.Equal(t, 2*time.Second, time.Since(start), "two failures, a second apart")
				cancel()
			}})
		}()
		require.ErrorIs(t, <-done, context.Canceled)
		assert.Equal(t, int32(-1), p.failures.Load(), "three campaigns")
	})
}
