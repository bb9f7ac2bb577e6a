package postgres

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// renewSurvivingFaults renews l, retrying while the pool hands out
// connections that died under it. Each failure must be an error (never a
// silently lost lease), wrapped with the operation.
func renewSurvivingFaults(t *testing.T, p *LockProvider, l lock.Lease) lock.Lease {
	t.Helper()
	for range 10 {
		got, err := p.Renew(ctx, []lock.Lease{l}, long)
		if err == nil {
			require.Len(t, got, 1, "the lease must survive the fault")
			require.Equal(t, l.Token, got[0].Token)
			return got[0]
		}
		require.ErrorContains(t, err, "postgres: renew")
		require.NotErrorIs(t, err, lease.ErrInvalidArgument)
		t.Logf("renew on a dead connection: %v", err)
	}
	t.Fatal("renew kept failing after the fault")
	return lock.Lease{}
}

// terminate kills every server process serving connections named app and
// returns how many there were.
func terminate(t *testing.T, p *LockProvider, app string) int {
	t.Helper()
	var n int
	require.NoError(t, p.pool.QueryRow(ctx,
		"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n))
	return n
}

func TestHolderConnectionsKilled(t *testing.T) {
	table := uniqueTable()
	app := "holder-" + table
	holder := providerOn(t, newPool(t, app), WithLockTable(table))
	other, err := NewLockProvider(newPool(t, "lease-test"), WithLockTable(table))
	require.NoError(t, err)

	l := mustAcquire(t, holder, "n", "holder")
	require.Positive(t, terminate(t, other, app))
	// A lease is a row, not a session: it outlives its holder's connections.
	requireHeld(t, other, "n")
	l = renewSurvivingFaults(t, holder, l)

	// Killed for good this time: the lease runs out and another execution
	// takes over, with a greater token.
	require.Positive(t, terminate(t, other, app))
	age(t, other, "n", 0)
	next := mustAcquire(t, other, "n", "other")
	require.Greater(t, next.Token, l.Token)

	// The old holder comes back: it can neither renew nor free the lock.
	var got []lock.Lease
	for range 10 {
		if got, err = holder.Renew(ctx, []lock.Lease{l}, long); err == nil {
			break
		}
	}
	require.NoError(t, err)
	assert.Empty(t, got)
	require.NoError(t, holder.Release(ctx, []lock.Lease{l}))
	requireHeld(t, other, "n")
}

// restart restarts the throwaway server of scripts/with-postgres.
func restart(t *testing.T, mode string) {
	t.Helper()
	ctl := os.Getenv(ctlEnv)
	if ctl == "" {
		t.Fatalf("%s is not set: this test restarts the server, so run it under ../scripts/with-postgres", ctlEnv)
	}
	out, err := exec.Command(ctl, "restart", "-m", mode).CombinedOutput()
	require.NoError(t, err, "%s restart -m %s:\n%s", ctl, mode, out)
}

func TestServerRestartBetweenAcquireAndRenew(t *testing.T) {
	// fast is a clean shutdown; immediate is a crash, recovered from WAL.
	for _, mode := range []string{"fast", "immediate"} {
		t.Run(mode, func(t *testing.T) {
			p := newTestProvider(t)
			l := mustAcquire(t, p, "held", "holder")
			released := mustAcquire(t, p, "released", "holder")
			require.NoError(t, p.Release(ctx, []lock.Lease{released}))

			restart(t, mode)
			renewSurvivingFaults(t, p, l)
			p.pool.Reset() // drop the remaining dead connections
			requireHeld(t, p, "held")

			// Tokens never go backwards, for a released name or a new one.
			again := mustAcquire(t, p, "released", "x")
			assert.Greater(t, again.Token, max(l.Token, released.Token))
			assert.Greater(t, mustAcquire(t, p, "new", "x").Token, again.Token)
		})
	}
}

// resource is a fake shared resource guarded by fencing tokens: it refuses
// stale tokens like any fenced resource, and also records what a correct
// lock must never allow: two writers inside at once, or a writer whose
// token is not above the last accepted one.
type resource struct {
	fence lock.Fence

	mu         sync.Mutex
	inside     int
	last       uint64
	writes     int
	violations []string
}

// write runs during as a write by l, unless the fence refuses its token.
func (r *resource) write(l lock.Lease, during func()) error {
	r.mu.Lock()
	if err := r.fence.Check(l.Name, l.Token); err != nil {
		r.mu.Unlock()
		return err
	}
	r.inside++
	if r.inside > 1 {
		r.violations = append(r.violations, fmt.Sprintf("%s (token %d) entered while another writer was inside", l.ExecutionID, l.Token))
	}
	if l.Token <= r.last {
		r.violations = append(r.violations, fmt.Sprintf("%s wrote with token %d after token %d", l.ExecutionID, l.Token, r.last))
	}
	r.last = l.Token
	r.mu.Unlock()

	during()

	r.mu.Lock()
	r.inside--
	r.writes++
	r.mu.Unlock()
	return nil
}

func TestContendingPools(t *testing.T) {
	// Eight processes' worth of contenders: each its own pool, so its own
	// connections, on one lock name.
	const contenders = 8
	table := uniqueTable()
	ps := make([]*LockProvider, contenders)
	for i := range ps {
		p, err := NewLockProvider(newPool(t, fmt.Sprintf("contender-%d", i)), WithLockTable(table))
		require.NoError(t, err)
		ps[i] = p
	}
	require.NoError(t, ps[0].Migrate(ctx))
	t.Cleanup(func() {
		dropTable(t, ps[0].pool, ps[0].table)
		dropTable(t, ps[0].pool, ps[0].waiters)
	})
	var res resource

	// hold writes to the resource under l, renewing it meanwhile, and
	// releases it. It runs on the contenders' goroutines, so it asserts.
	hold := func(t *testing.T, p *LockProvider, l lock.Lease) {
		assert.NoError(t, res.write(l, func() {
			got, err := p.Renew(ctx, []lock.Lease{l}, long)
			assert.NoError(t, err)
			assert.Len(t, got, 1, "%s lost its lock while writing", l.ExecutionID)
		}))
		assert.NoError(t, p.Release(ctx, []lock.Lease{l}))
	}

	t.Run("rounds", func(t *testing.T) {
		// All contenders try at once; exactly one wins every round, and its
		// release lets the next round have a winner at all.
		for round := range 30 {
			won := make([]*lock.Lease, contenders)
			errs := make([]error, contenders)
			var wg sync.WaitGroup
			for i, p := range ps {
				wg.Go(func() { won[i], errs[i] = p.Acquire(ctx, "shared", fmt.Sprint("c", i), long) })
			}
			wg.Wait()
			winner := -1
			for i := range ps {
				require.NoError(t, errs[i], "round %d, contender %d", round, i)
				if won[i] != nil {
					require.Equal(t, -1, winner, "round %d: contenders %d and %d both won", round, winner, i)
					winner = i
				}
			}
			require.NotEqual(t, -1, winner, "round %d: nobody won: a release was lost", round)
			hold(t, ps[winner], *won[winner])
		}
	})

	t.Run("free-running", func(t *testing.T) {
		// Contenders loop on their own. Every fifth win is abandoned instead
		// of released, as by a holder that stalls until its lease expires
		// (simulated by ageing the row); its late write must be refused.
		const attempts = 40
		var (
			mu    sync.Mutex
			wins  int
			stale []lock.Lease
			wg    sync.WaitGroup
		)
		for i, p := range ps {
			wg.Go(func() {
				for a := range attempts {
					l, err := p.Acquire(ctx, "shared", fmt.Sprint("c", i), long)
					if !assert.NoError(t, err) || l == nil {
						continue
					}
					mu.Lock()
					wins++
					abandon := wins%5 == 0
					mu.Unlock()
					if !abandon {
						hold(t, p, *l)
						continue
					}
					assert.NoError(t, res.write(*l, func() {}), "attempt %d", a)
					assert.NoError(t, ageErr(p, "shared", 0))
					mu.Lock()
					stale = append(stale, *l)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Positive(t, wins)
		// No release was lost: the lock is free now.
		hold(t, ps[0], mustAcquire(t, ps[0], "shared", "final"))
		for _, l := range stale {
			assert.ErrorIs(t, res.write(l, func() {}), lock.ErrStaleToken, "late write of token %d", l.Token)
		}
	})

	res.mu.Lock()
	defer res.mu.Unlock()
	assert.Empty(t, res.violations)
	assert.Positive(t, res.writes)
	t.Logf("%d writes, %d violations", res.writes, len(res.violations))
}
