package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/lock"
)

// TestWaitersLeaveTheHolderItsConnections: more waiters than the pool has
// connections do not starve the holder, which renews its lock while they
// wait and releases it to them, one after the other.
func TestWaitersLeaveTheHolderItsConnections(t *testing.T) {
	const poolSize, n = 4, 12
	pool := newPool(t, "lease-test", func(c *pgxpoolConfig) { c.MaxConns = poolSize })
	p := providerOn(t, pool, WithLockTable(uniqueTable()))
	started := waiting(p)
	renewed := make(chan struct{}, 64)
	holder := newManager(t, p, lock.WithExecutionID("holder"), lock.WithLeaseDuration(1500*time.Millisecond),
		lock.WithObserver(lock.ObserverFunc(func(e lock.Event) {
			if e.Kind == lock.EventRenewed {
				select {
				case renewed <- struct{}{}:
				default:
				}
			}
		})))

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		order []uint64
	)
	c := waitCtx(t)
	acquired, err := holder.TryLock(c, "job", func(hctx context.Context, _ lock.Lease) error {
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := p.AcquireWait(c, "job", fmt.Sprintf("w%d", i), long)
				if assert.NoError(t, err) && assert.NotNil(t, l) {
					mu.Lock()
					order = append(order, l.Token)
					mu.Unlock()
					assert.NoError(t, p.Release(ctx, []lock.Lease{*l}))
				}
			}()
		}
		for range n { // every waiter has been refused at least once
			select {
			case <-started:
			case <-hctx.Done():
				return fmt.Errorf("lost while waiters queued: %w", context.Cause(hctx))
			}
		}
		for range 3 { // and the holder still renews
			select {
			case <-renewed:
			case <-hctx.Done():
				return fmt.Errorf("lost with %d waiters: %w", n, context.Cause(hctx))
			}
		}
		return nil
	})
	require.NoError(t, err, "the holder kept its lock")
	require.True(t, acquired)
	wg.Wait()
	assert.Len(t, order, n, "every waiter had the lock in turn")
	assert.True(t, slices.IsSorted(order), "tokens in the order granted: %v", order)
	assert.LessOrEqual(t, pool.Stat().TotalConns(), int32(poolSize))
}

// TestWaitersAreServedInOrderAcrossProcesses: waiters of two providers on
// two pools (as two processes would be) get the lock in the order they
// started waiting, alternating between the processes.
func TestWaitersAreServedInOrderAcrossProcesses(t *testing.T) {
	a := newTestProvider(t)
	b, err := NewLockProvider(newPool(t, "lease-test-b"), WithLockTable(a.table[1:len(a.table)-1]))
	require.NoError(t, err)
	procs := []*LockProvider{a, b}
	held := mustAcquire(t, a, "job", "holder")

	const n = 8
	var (
		mu    sync.Mutex
		order []int
	)
	done := make([]<-chan waitResult, n)
	c := waitCtx(t)
	for i := range n {
		p := procs[i%2]
		ch := make(chan waitResult, 1)
		done[i] = ch
		go func() {
			l, err := p.AcquireWait(c, "job", fmt.Sprintf("w%d", i), long)
			if err == nil {
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				err = p.Release(ctx, []lock.Lease{*l})
			}
			ch <- waitResult{l: l, err: err}
		}()
		// Queued before the next starts. (A waiter's provider may wake it
		// more than once while it waits, so its refusals do not count
		// waiters.)
		require.Eventually(t, func() bool { return tickets(t, a) == i+1 }, 10*time.Second, time.Millisecond)
	}
	require.NoError(t, a.Release(ctx, []lock.Lease{held}))
	for i := range n {
		r := receive(t, done[i])
		require.NoError(t, r.err, "waiter %d", i)
	}
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, order, "first come, first served")
}

// TestWaiterThatGivesUpLetsTheNextGo: a waiter whose context ends leaves the
// queue at once, so the one behind it is not held up.
func TestWaiterThatGivesUpLetsTheNextGo(t *testing.T) {
	p := newTestProvider(t)
	p.ticketTTL = time.Hour // a ticket left behind would block the test
	started := waiting(p)
	held := mustAcquire(t, p, "job", "holder")
	first, cancel := context.WithCancel(waitCtx(t))
	gaveUp := goWait(first, p, "job", "first", long)
	awaitWaiting(t, started, "job")
	next := goWait(waitCtx(t), p, "job", "next", long)
	awaitWaiting(t, started, "job")
	cancel()
	assert.ErrorIs(t, receive(t, gaveUp).err, context.Canceled)
	require.NoError(t, p.Release(ctx, []lock.Lease{held}))
	r := receive(t, next)
	require.NoError(t, r.err)
	require.NotNil(t, r.l)
	assert.Equal(t, "next", rows(t, p)["job"].ExecutionID)
	assert.Zero(t, tickets(t, p), "no ticket left behind")
	assert.Zero(t, armed(p), "no wake-up left behind")
}

// armed counts the names p's waiters have armed a wake-up for.
func armed(p *LockProvider) int {
	return p.hub.names.Keys()
}

// TestDeadWaitersTicketGoesStale: a ticket nobody refreshes any more (its
// waiter's process died) stops holding the queue up once stale, and the
// waiter behind it gets the lock then, without a notification.
func TestDeadWaitersTicketGoesStale(t *testing.T) {
	p := newTestProvider(t)
	const ttl = 600 * time.Millisecond
	p.ticketTTL = ttl
	started := waiting(p)
	held := mustAcquire(t, p, "job", "holder")
	var deadAt time.Time
	require.NoError(t, p.pool.QueryRow(ctx, "INSERT INTO "+p.waiters+" (name, seen_at) VALUES ('job', clock_timestamp()) RETURNING seen_at").Scan(&deadAt))
	live := goWait(waitCtx(t), p, "job", "live", long)
	awaitWaiting(t, started, "job")
	require.NoError(t, p.Release(ctx, []lock.Lease{held}))
	r := receive(t, live)
	require.NoError(t, r.err)
	require.NotNil(t, r.l)
	granted := r.l.ExpiresAt.Add(-long) // on the database's clock
	assert.False(t, granted.Before(deadAt.Add(ttl)), "granted at %v, before the dead ticket went stale at %v", granted, deadAt.Add(ttl))
	assert.Less(t, granted.Sub(deadAt.Add(ttl)), time.Second, "woken when it went stale")
	// The live waiter's own ticket was refreshed meanwhile: it stayed in
	// line for longer than a ticket's life.
	_, err := p.pool.Exec(ctx, "DELETE FROM "+p.waiters)
	require.NoError(t, err)
}

// TestLiveWaiterOutlivesItsTicketsLife: a waiter that waits for longer than
// a ticket lives keeps its place, its provider refreshing its ticket, so a
// later waiter does not overtake it.
func TestLiveWaiterOutlivesItsTicketsLife(t *testing.T) {
	a := newTestProvider(t)
	b, err := NewLockProvider(newPool(t, "lease-test-b"), WithLockTable(a.table[1:len(a.table)-1]))
	require.NoError(t, err)
	const ttl = 300 * time.Millisecond
	a.ticketTTL, b.ticketTTL = ttl, ttl
	startedA, startedB := waiting(a), waiting(b)
	held := mustAcquire(t, a, "job", "holder")
	first := goWait(waitCtx(t), a, "job", "first", long)
	awaitWaiting(t, startedA, "job")
	second := goWait(waitCtx(t), b, "job", "second", long)
	awaitWaiting(t, startedB, "job")
	// The first ticket, refreshed meanwhile, outlives several lives of a
	// ticket, as the database's clock reads them.
	firstTicket := "SELECT seen_at FROM " + a.waiters + " ORDER BY ticket LIMIT 1"
	var queued time.Time
	require.NoError(t, a.pool.QueryRow(ctx, firstTicket).Scan(&queued))
	require.Eventually(t, func() bool {
		var seen time.Time
		err := a.pool.QueryRow(ctx, firstTicket).Scan(&seen)
		return err == nil && seen.Sub(queued) > 4*ttl
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, a.Release(ctx, []lock.Lease{held}))
	r := receive(t, first)
	require.NoError(t, r.err)
	require.NotNil(t, r.l, "the first waiter kept its place")
	require.NoError(t, a.Release(ctx, []lock.Lease{*r.l}))
	r = receive(t, second)
	require.NoError(t, r.err)
	require.NotNil(t, r.l)
}

// tickets counts the rows of p's waiters' table.
func tickets(t *testing.T, p *LockProvider) int {
	t.Helper()
	var n int
	require.NoError(t, p.pool.QueryRow(ctx, "SELECT count(*) FROM "+p.waiters).Scan(&n))
	return n
}
