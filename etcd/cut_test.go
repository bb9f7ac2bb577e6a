package etcd

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/leasehold/lease/lock/election"
)

// The schedule of the tests that stop their etcd member: renewals every
// second, the safety deadline 2.7 s after the last confirmed renewal, and
// 300 ms for a call on the way out.
const (
	cutLease = 3 * time.Second
	cutRetry = cutLease / 10
	// cutSlack is what the tests allow on top of a bound, in real time,
	// for scheduling on a loaded machine.
	cutSlack = time.Second
)

// member is an etcd server of a test's own, which the test may stop, and a
// client of it.
type member struct {
	stop   func() // closes the server; idempotent
	client *clientv3.Client
	p      *Provider
}

// newMember starts a single-member etcd server for t alone and a client of
// it; both are closed with the test.
func newMember(t *testing.T) *member {
	t.Helper()
	srv, err := startServer(t.TempDir())
	require.NoError(t, err)
	stop := sync.OnceFunc(srv.Close) // a second Close panics
	t.Cleanup(stop)
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{srv.Clients[0].Addr().String()},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	p, err := New(client)
	require.NoError(t, err)
	return &member{stop: stop, client: client, p: p}
}

// candidate is a Run on a member, its callbacks reported on channels.
type candidate struct {
	cancel  context.CancelFunc
	done    chan error
	exited  chan struct{} // closed once Run has returned
	started chan *election.Leadership
	stopped chan time.Time
}

// runCandidate starts Run on el with OnNewLeader on, so that Observe's
// watch meets the outage too. The test's end cancels it and waits for it.
func runCandidate(t *testing.T, el *election.Election, value string) *candidate {
	ctx, cancel := context.WithCancel(context.Background())
	c := &candidate{
		cancel:  cancel,
		done:    make(chan error, 1),
		exited:  make(chan struct{}),
		started: make(chan *election.Leadership, 4),
		stopped: make(chan time.Time, 4),
	}
	go func() {
		defer close(c.exited)
		c.done <- el.Run(ctx, []byte(value), election.Callbacks{
			OnStartedLeading: func(ctx context.Context, ld *election.Leadership) {
				c.started <- ld
				<-ctx.Done()
			},
			OnStoppedLeading: func() { c.stopped <- time.Now() },
			OnNewLeader:      func(election.Leader) {},
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			t.Errorf("%s's Run did not return within 30 s of its cancellation", value)
		}
	})
	return c
}

// within returns what ch delivers within limit, failing the test
// otherwise.
func within[T any](t *testing.T, ch <-chan T, limit time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(limit):
		t.Fatalf("%s: nothing within %v", what, limit)
		var zero T
		return zero
	}
}

// A leader whose etcd member stops loses its leadership by the safety
// deadline; OnStoppedLeading follows within the bound of the release that
// cannot get through, and Run, campaigning into the outage, returns
// promptly once cancelled. A follower queued for the lock returns promptly
// too: its way out of the queue is bounded as well.
func TestRunEndsWhileEtcdIsDown(t *testing.T) {
	m := newMember(t)
	el, err := election.New(m.p, "e", election.WithLeaseDuration(cutLease))
	require.NoError(t, err)
	a := runCandidate(t, el, "a")
	ld := within(t, a.started, 10*time.Second, "a's OnStartedLeading")
	b := runCandidate(t, el, "b")
	require.Eventually(t, func() bool {
		resp, err := m.client.Get(context.Background(), m.p.queuePrefix("e"), clientv3.WithPrefix(), clientv3.WithCountOnly())
		return err == nil && resp.Count == 1
	}, 10*time.Second, 10*time.Millisecond, "b queues")

	m.stop() // every call now waits for a server that is gone
	cut := time.Now()
	within(t, ld.Context().Done(), cutLease+cutSlack, "the leadership's end")
	lost := time.Now()
	assert.ErrorIs(t, context.Cause(ld.Context()), election.ErrLeadershipLost)
	assert.Less(t, lost.Sub(cut), cutLease, "lost by the safety deadline")
	stopped := within(t, a.stopped, cutRetry+cutSlack, "a's OnStoppedLeading")
	assert.Less(t, stopped.Sub(lost), cutRetry+cutSlack)

	for _, c := range []*candidate{a, b} {
		cancelled := time.Now()
		c.cancel()
		assert.ErrorIs(t, within(t, c.done, cutRetry+cutSlack, "Run's return"), context.Canceled)
		assert.Less(t, time.Since(cancelled), cutRetry+cutSlack)
	}
}
