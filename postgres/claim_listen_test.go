package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// catchUpLimit bounds how long a cancel may take to reach a handler once
// the worker's connection listens again: far less than the heartbeat of
// workLease, which is when the handler would learn of it otherwise.
const (
	workLease    = time.Minute
	catchUpLimit = 10 * time.Second
)

// holdListen makes the listening sessions of s from the nth on (1 for the
// first) wait, between connecting and LISTEN, until release is called;
// entered receives once when the nth session gets there. Call it before s
// starts listening.
func holdListen(t *testing.T, s *ClaimStore, nth int32) (entered <-chan struct{}, release func()) {
	t.Helper()
	in, out := make(chan struct{}, 1), make(chan struct{})
	var sessions atomic.Int32
	s.beforeListen = func() {
		if sessions.Add(1) < nth {
			return
		}
		select {
		case in <- struct{}{}:
		default:
		}
		<-out
	}
	var once sync.Once
	release = func() { once.Do(func() { close(out) }) }
	t.Cleanup(release) // Close waits for the listener
	return in, release
}

// listeningWorker returns another store on s's table, on a pool of its own
// named app, whose listening connection listens already; its sessions
// after that one wait for release, and reconnecting receives when the
// next one starts.
func listeningWorker(t *testing.T, s *ClaimStore) (worker *ClaimStore, app string, reconnecting <-chan struct{}, release func()) {
	t.Helper()
	app = "claims-listener-" + uniqueTable()
	worker = secondStore(t, s, app, WithPoll(time.Hour))
	reconnecting, release = holdListen(t, worker, 2)
	// Notify starts the listener, whose start wakes every waiter.
	ready, stop := worker.Notify("probe")
	<-ready
	stop()
	return worker, app, reconnecting, release
}

// terminateApp terminates the server processes of app's connections.
func terminateApp(t *testing.T, s *ClaimStore, app string) {
	t.Helper()
	var n int
	require.NoError(t, s.pool.QueryRow(ctx,
		"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n))
	require.Positive(t, n)
}

// runningHandler runs Work on s's queue q with one handler, which blocks
// until its context ends and then sends the context's cause. It returns
// the claim the handler got, the causes and a stop for Work.
func runningHandler(t *testing.T, s *ClaimStore, q string) (claim.Claim, <-chan error, func()) {
	t.Helper()
	b := lease.Must(claim.New(s))
	started := make(chan claim.Claim, 1)
	causes := make(chan error, 1)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- b.Work(ctx, claim.Worker{Queue: q, Owner: "worker", Concurrency: 1, LeaseDuration: workLease,
			Handler: func(hctx context.Context, c claim.Claim) error {
				started <- c
				<-hctx.Done()
				causes <- context.Cause(hctx)
				return hctx.Err()
			}})
	}()
	stop := func() {
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, b.Close())
	}
	select {
	case c := <-started:
		return c, causes, stop
	case <-time.After(catchUpLimit):
		stop()
		t.Fatal("the handler did not start")
		return claim.Claim{}, nil, nil
	}
}

// requireCancelledPromptly waits for a handler's cause: the cancel, not a
// lost claim, well before the heartbeat would have told it anything.
func requireCancelledPromptly(t *testing.T, causes <-chan error) {
	t.Helper()
	select {
	case cause := <-causes:
		require.ErrorIs(t, cause, claim.ErrCancelled)
		assert.NotErrorIs(t, cause, claim.ErrClaimLost)
	case <-time.After(catchUpLimit):
		t.Fatalf("the handler was not told of the cancel within %v (its heartbeat comes every %v)", catchUpLimit, workLease/3)
	}
}

// TestClaimCancelWhileListenerReconnects cancels a running handler's item
// from another store while the worker's listening connection is down: its
// notification goes unheard, and the worker learns of the cancel when its
// connection listens again.
func TestClaimCancelWhileListenerReconnects(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []ClaimOption
	}{
		{"deleted", nil},
		// A store that keeps cancelled items leaves the row, as Cancelled.
		{"kept", []ClaimOption{WithRetention(claim.StandardRetention)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestClaimStore(t, tc.opts...)
			worker, app, reconnecting, release := listeningWorker(t, s)
			it := enqueue(t, s, item("q", "job"))[0]
			c, causes, stop := runningHandler(t, worker, "q")
			defer stop()
			require.Equal(t, it.ID, c.Item)

			terminateApp(t, s, app)
			<-reconnecting // the old connection is gone; the new one waits
			require.NoError(t, s.Cancel(ctx, "q", it.ID))
			release()
			requireCancelledPromptly(t, causes)
		})
	}
}

// TestClaimCancelBeforeListenerListens cancels a running handler's item
// from another store before the worker's first listening connection
// listens: the worker learns of the cancel once it does.
func TestClaimCancelBeforeListenerListens(t *testing.T) {
	s := newTestClaimStore(t)
	worker := secondStore(t, s, "claims-late-listener-"+uniqueTable(), WithPoll(time.Hour))
	starting, release := holdListen(t, worker, 1)
	it := enqueue(t, s, item("q", "job"))[0]
	c, causes, stop := runningHandler(t, worker, "q")
	defer stop()
	require.Equal(t, it.ID, c.Item)
	<-starting
	require.NoError(t, s.Cancel(ctx, "q", it.ID))
	release()
	requireCancelledPromptly(t, causes)
}

// TestClaimListenerCatchUpReportsOnlyCancels has the catch-up of a
// reconnecting listener meet, besides a cancelled claim, a live one, one its
// own store completed, and one whose lease ran out before its item was
// claimed again and completed by another store: only the cancelled one's
// Lost is called.
func TestClaimListenerCatchUpReportsOnlyCancels(t *testing.T) {
	s := newTestClaimStore(t)
	worker, app, reconnecting, release := listeningWorker(t, s)
	its := enqueue(t, s, item("cancelled", "a"), item("live", "b"), item("completed", "c"), item("expired", "d"))
	lost := make(chan claim.Ref, len(its))
	claimOne := func(queue string, leaseDuration time.Duration) claim.Claim {
		cs, err := worker.Claim(ctx, claim.ClaimRequest{Queue: queue, Owner: "worker", Limit: 1, Lease: leaseDuration,
			Lost: func(r claim.Ref, _ error) { lost <- r }})
		require.NoError(t, err)
		require.Len(t, cs, 1)
		return cs[0]
	}
	cancelled, live, completed := claimOne("cancelled", long), claimOne("live", long), claimOne("completed", long)
	expired := claimOne("expired", 500*time.Millisecond)

	terminateApp(t, s, app)
	<-reconnecting
	require.NoError(t, s.Cancel(ctx, "cancelled", cancelled.Item))
	var err error
	for range 10 { // the worker's pool lost its connections too
		if err = worker.Settle(ctx, complete(completed)); err == nil {
			break
		}
	}
	require.NoError(t, err)
	again := claimAgain(t, s, "expired", "rescuer", long)
	require.Equal(t, expired.Item, again.Item)
	require.NoError(t, s.Settle(ctx, complete(again)))
	release()

	select {
	case r := <-lost:
		assert.Equal(t, cancelled.Ref, r)
	case <-time.After(catchUpLimit):
		t.Fatal("the cancelled claim's Lost was not called")
	}
	// The catch-up is over once a notification is handled.
	ready, stopWait := worker.Notify("probe")
	defer stopWait()
	enqueue(t, s, item("probe", "after the catch-up"))
	<-ready
	assert.Empty(t, lost, "only the cancelled claim is reported")
	for range 10 {
		if _, err = worker.Extend(ctx, live.Ref, long); err == nil {
			break
		}
	}
	require.NoError(t, err, "the live claim is untouched")
}
