package postgres

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// claimAgain claims one item of queue for owner, retrying (on the
// database's clock: the lease of a lost claim must run out first) until
// one comes.
func claimAgain(t *testing.T, s *ClaimStore, queue, owner string, leaseDuration time.Duration) claim.Claim {
	t.Helper()
	for range 500 {
		cs, err := s.Claim(ctx, claim.ClaimRequest{Queue: queue, Owner: owner, Limit: 1, Lease: leaseDuration})
		require.NoError(t, err)
		if len(cs) == 1 {
			return cs[0]
		}
		<-time.After(20 * time.Millisecond) // the database's clock decides
	}
	t.Fatal("nothing became claimable")
	return claim.Claim{}
}

// TestClaimWorkerConnectionsKilled kills a worker's connections while its
// handler runs: the claim's lease runs out, the item is claimed again and
// runs again, and the worker's late completion is refused.
func TestClaimWorkerConnectionsKilled(t *testing.T) {
	s := newTestClaimStore(t)
	app := "claims-worker-" + uniqueTable()
	worker := secondStore(t, s, app)
	it := enqueue(t, s, item("q", "job"))[0]

	const short = 300 * time.Millisecond
	first := claimAgain(t, worker, "q", "worker", short)
	// The worker's connections die mid-handler, its listener's included.
	var n int
	require.NoError(t, s.pool.QueryRow(ctx,
		"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n))
	require.Positive(t, n)

	second := claimAgain(t, s, "q", "rescuer", time.Hour)
	assert.Equal(t, it.ID, second.Item)
	assert.Equal(t, 2, second.Attempt, "it runs again")
	got := lookup(t, s, it.ID)
	require.Len(t, got.History, 1)
	assert.True(t, got.History[0].Lost)
	assert.Equal(t, "worker", got.History[0].Owner)

	// The worker comes back: its completion is stale, whatever the
	// connection errors on the way.
	var err error
	for range 10 {
		if err = worker.Settle(ctx, complete(first)); errors.Is(err, lease.ErrStaleUse) {
			break
		}
	}
	requireStale(t, err)
	require.NoError(t, s.Settle(ctx, complete(second)))
	assert.Equal(t, claim.Counts{}, counts(t, s, "q"))
}

// burnDown runs workers goroutines, each looping Claim (up to 10) and
// Complete until the queue is empty, tolerating errors (a server going
// away). It fails the test if an item whose Complete returned nil is
// claimed again, and returns how many Completes returned nil.
func burnDown(t *testing.T, stores []*ClaimStore, perStore int, queue string, leaseDuration time.Duration, progress func(done int64)) int64 {
	t.Helper()
	var (
		mu        sync.Mutex
		completed = map[claim.ItemID]bool{}
		ran       = map[claim.ItemID]int{}
		done      atomic.Int64
		wg        sync.WaitGroup
	)
	for si, s := range stores {
		for w := range perStore {
			owner := "w" + strconv.Itoa(si) + "-" + strconv.Itoa(w)
			wg.Go(func() {
				for {
					ready, stop := s.Notify(queue)
					cs, err := s.Claim(ctx, claim.ClaimRequest{Queue: queue, Owner: owner, Limit: 10, Lease: leaseDuration})
					if err == nil && len(cs) == 0 {
						c, cerr := s.Counts(ctx, queue)
						if cerr == nil && c == (claim.Counts{}) {
							stop()
							return
						}
					}
					if err != nil || len(cs) == 0 {
						<-ready // a notification, or the poll
						stop()
						continue
					}
					stop()
					for _, c := range cs {
						mu.Lock()
						if completed[c.Item] {
							t.Errorf("item %d was claimed again after its Complete returned nil", c.Item)
						}
						ran[c.Item]++
						mu.Unlock()
						if err := s.Settle(ctx, complete(c)); err == nil {
							mu.Lock()
							completed[c.Item] = true
							mu.Unlock()
							d := done.Add(1)
							if progress != nil {
								progress(d)
							}
						}
					}
				}
			})
		}
	}
	wg.Wait()
	return done.Load()
}

// TestServerRestartDuringClaimBurnDown restarts the server while workers
// burn down a queue: every enqueued item is completed in the end, none
// whose Complete returned nil runs again, and the workers carry on by
// themselves.
func TestServerRestartDuringClaimBurnDown(t *testing.T) {
	const n = 3000
	s := newTestClaimStore(t, WithPoll(50*time.Millisecond))
	items := make([]claim.NewItem, n)
	for i := range items {
		items[i] = claim.NewItem{Queue: "q", Payload: []byte(strconv.Itoa(i)), MaxAttempts: 100}
	}
	_, err := s.Enqueue(ctx, items)
	require.NoError(t, err)

	start := time.Now()
	restarted := make(chan struct{})
	var once sync.Once
	var restartErr error
	done := burnDown(t, []*ClaimStore{s}, 6, "q", time.Second, func(done int64) {
		if done == n/3 {
			once.Do(func() {
				// Immediate: a crash, recovered from the WAL.
				start := time.Now()
				restartErr = restartServer("immediate")
				t.Logf("restarted in %v", time.Since(start))
				close(restarted)
			})
		}
	})
	require.NoError(t, restartErr)
	<-restarted
	t.Logf("%d of %d Completes returned nil after %v; the others were cut off by the restart", done, n, time.Since(start))
	assert.Equal(t, claim.Counts{}, counts(t, s, "q"), "every enqueued item was completed")
}

// restartServer restarts the throwaway server of scripts/with-postgres,
// from any goroutine.
func restartServer(mode string) error {
	ctl := os.Getenv(ctlEnv)
	if ctl == "" {
		return fmt.Errorf("%s is not set: this test restarts the server, so run it under ../scripts/with-postgres", ctlEnv)
	}
	if out, err := exec.Command(ctl, "restart", "-m", mode).CombinedOutput(); err != nil {
		return fmt.Errorf("%s restart -m %s: %w\n%s", ctl, mode, err, out)
	}
	return nil
}

// TestClaimEightPools has eight pools, as eight processes would, claim one
// queue at once: every item is completed exactly once.
func TestClaimEightPools(t *testing.T) {
	const n = 2000
	s := newTestClaimStore(t)
	stores := []*ClaimStore{s}
	for i := range 7 {
		stores = append(stores, secondStore(t, s, "claims-pool-"+strconv.Itoa(i)))
	}
	items := make([]claim.NewItem, n)
	for i := range items {
		items[i] = claim.NewItem{Queue: "q", Payload: []byte(strconv.Itoa(i)), MaxAttempts: 1}
	}
	_, err := s.Enqueue(ctx, items)
	require.NoError(t, err)
	// An hour's lease: any second claim of an item would be a bug.
	done := burnDown(t, stores, 3, "q", time.Hour, nil)
	assert.EqualValues(t, n, done)
	assert.Equal(t, claim.Counts{}, counts(t, s, "q"))
}

// TestClaimListenerReconnects kills the store's listening connection: it
// reconnects by itself, wakes the waiters (notifications may have been
// missed meanwhile), and notifications reach it again.
func TestClaimListenerReconnects(t *testing.T) {
	s := newTestClaimStore(t)
	app := "claims-listener-" + uniqueTable()
	listener := secondStore(t, s, app, WithPoll(time.Hour))
	ready, stop := listener.Notify("q")
	<-ready // the first connection listens
	stop()

	ready, stop = listener.Notify("q")
	defer stop()
	var n int
	require.NoError(t, s.pool.QueryRow(ctx,
		"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n))
	require.Positive(t, n)
	<-ready // closed by the new connection, once it listens

	again, stopAgain := listener.Notify("q")
	defer stopAgain()
	enqueue(t, s, item("q", "after the reconnect"))
	<-again // a notification: the poll is an hour
}
