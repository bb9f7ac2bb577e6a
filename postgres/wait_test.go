package postgres

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/lock"
)

// AcquireWait is tested on the real clock, against the database: a test
// learns that a waiter is waiting (already listening, its attempt refused)
// from the provider's onWait hook, and never sleeps. Waiters use a lease of
// an hour, so their poll interval (6 minutes) is far beyond every bound
// here: a waiter woken in time was woken by a notification or by the
// holder's expiry read from the database.

// waiting returns a channel that receives each name p's AcquireWait starts
// waiting for; past its buffer, the names are dropped rather than block
// the waiters (a waiter woken without its turn waits again, and says so).
func waiting(p *LockProvider) <-chan string {
	ch := make(chan string, 1024)
	p.onWait = func(name string) {
		select {
		case ch <- name:
		default:
		}
	}
	return ch
}

// awaitWaiting blocks until a waiter of p waits for name.
func awaitWaiting(t *testing.T, ch <-chan string, name string) {
	t.Helper()
	c := waitCtx(t)
	for {
		select {
		case got := <-ch:
			if got == name {
				return
			}
		case <-c.Done():
			t.Fatalf("no waiter started waiting for %q", name)
		}
	}
}

type waitResult struct {
	l   *lock.Lease
	err error
	at  time.Time // when AcquireWait returned
}

// goWait runs AcquireWait in a goroutine and returns its outcome's channel.
func goWait(c context.Context, p *LockProvider, name, exec string, d time.Duration) <-chan waitResult {
	ch := make(chan waitResult, 1)
	go func() {
		l, err := p.AcquireWait(c, name, exec, d)
		ch <- waitResult{l, err, time.Now()}
	}()
	return ch
}

func receive(t *testing.T, ch <-chan waitResult) waitResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-waitCtx(t).Done():
		t.Fatal("AcquireWait did not return")
		return waitResult{}
	}
}

func TestAcquireWaitFreeLockAtOnce(t *testing.T) {
	p := newTestProvider(t)
	l, err := p.AcquireWait(ctx, "free", "a", long)
	require.NoError(t, err)
	require.NotNil(t, l)
	assert.Equal(t, "a", rows(t, p)["free"].ExecutionID)
	assert.Equal(t, int64(l.Token), rows(t, p)["free"].Token)
}

// TestAcquireWaitHandOffOnRelease: a waiter blocked on a held lock, in
// another pool (as another process would be), gets it once the holder
// releases it, woken by the release's notification. It logs the hand-off
// latency: from the Release call to AcquireWait's return.
func TestAcquireWaitHandOffOnRelease(t *testing.T) {
	holder := newTestProvider(t)
	waiter, err := NewLockProvider(newPool(t, "lease-test-waiter"), WithLockTable(holder.table[1:len(holder.table)-1]))
	require.NoError(t, err)
	started := waiting(waiter)
	const rounds = 20
	var latencies []time.Duration
	for i := range rounds {
		held := mustAcquire(t, holder, "job", "holder")
		done := goWait(waitCtx(t), waiter, "job", "waiter", long)
		awaitWaiting(t, started, "job")
		released := time.Now()
		require.NoError(t, holder.Release(ctx, []lock.Lease{held}))
		r := receive(t, done)
		require.NoError(t, r.err, "round %d", i)
		require.NotNil(t, r.l)
		assert.Greater(t, r.l.Token, held.Token)
		assert.Equal(t, "waiter", rows(t, holder)["job"].ExecutionID)
		latencies = append(latencies, r.at.Sub(released))
		require.NoError(t, waiter.Release(ctx, []lock.Lease{*r.l}))
	}
	slices.Sort(latencies)
	t.Logf("hand-off on release, %d rounds: p50 %v, p90 %v, max %v",
		rounds, latencies[rounds/2], latencies[rounds*9/10], latencies[rounds-1])
	assert.Less(t, latencies[rounds/2], time.Second, "woken by the notification, not the poll")
}

// TestAcquireWaitReleaseOfOtherNames: notifications of other names on the
// same table do not hand the lock over, and a batch Release notifies every
// name it frees.
func TestAcquireWaitReleaseOfOtherNames(t *testing.T) {
	p := newTestProvider(t)
	started := waiting(p)
	a, b, c := mustAcquire(t, p, "a", "h"), mustAcquire(t, p, "b", "h"), mustAcquire(t, p, "c", "h")
	doneA := goWait(waitCtx(t), p, "a", "wa", long)
	awaitWaiting(t, started, "a")
	doneB := goWait(waitCtx(t), p, "b", "wb", long)
	awaitWaiting(t, started, "b")

	require.NoError(t, p.Release(ctx, []lock.Lease{c}))
	requireHeld(t, p, "a")
	requireHeld(t, p, "b")
	require.NoError(t, p.Release(ctx, []lock.Lease{b, a})) // one statement
	for name, done := range map[string]<-chan waitResult{"a": doneA, "b": doneB} {
		r := receive(t, done)
		require.NoError(t, r.err)
		require.NotNil(t, r.l)
		assert.Equal(t, "w"+name, rows(t, p)[name].ExecutionID)
	}
}

// TestAcquireWaitHandOffOnExpiry: nobody releases, so nobody notifies; the
// waiter tries again when the holder's lease ends as the database reads it,
// plus the lock delay for an expiry. Leases of a few hundred milliseconds
// are waited out in real time, as the conformance suite does.
func TestAcquireWaitHandOffOnExpiry(t *testing.T) {
	for _, delay := range []time.Duration{0, 200 * time.Millisecond} {
		t.Run("delay="+delay.String(), func(t *testing.T) {
			p := newTestProvider(t, WithLockDelay(delay))
			const d = 300 * time.Millisecond
			held, err := p.Acquire(ctx, "job", "holder", d)
			require.NoError(t, err)
			require.NotNil(t, held)
			start := time.Now()
			r := receive(t, goWait(waitCtx(t), p, "job", "waiter", long))
			require.NoError(t, r.err)
			require.NotNil(t, r.l)
			assert.Greater(t, r.l.Token, held.Token)
			// Granted, on the database's clock, once the lease and its
			// delay were over, and soon after.
			granted := r.l.ExpiresAt.Add(-long)
			available := held.ExpiresAt.Add(delay)
			assert.False(t, granted.Before(available), "granted at %v, available from %v", granted, available)
			assert.Less(t, granted.Sub(available), time.Second, "woken at the expiry, not by the poll")
			t.Logf("waited %v for a %v lease with a %v delay", r.at.Sub(start), d, delay)
		})
	}
}

// TestAcquireWaitContextEnds: a waiter whose context ends returns ctx's
// error, holds nothing, and leaves its connection to the pool, no longer
// listening.
func TestAcquireWaitContextEnds(t *testing.T) {
	pool := newPool(t, "lease-test", func(c *pgxpoolConfig) { c.MaxConns = 1 })
	p := providerOn(t, pool, WithLockTable(uniqueTable()))
	started := waiting(p)
	held := mustAcquire(t, p, "job", "holder")

	t.Run("cancelled while waiting", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		done := goWait(c, p, "job", "waiter", long)
		awaitWaiting(t, started, "job")
		cancel()
		r := receive(t, done)
		assert.Equal(t, context.Canceled, r.err, "ctx.Err() itself")
		assert.Nil(t, r.l)
	})
	t.Run("deadline while waiting", func(t *testing.T) {
		c, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		r := receive(t, goWait(c, p, "job", "waiter", long))
		assert.Equal(t, context.DeadlineExceeded, r.err)
		assert.Nil(t, r.l)
	})
	t.Run("done before", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		_, err := p.AcquireWait(c, "other", "waiter", long)
		assert.Equal(t, context.Canceled, err)
		assert.NotContains(t, rows(t, p), "other", "nothing was sent")
	})

	assert.Equal(t, "holder", rows(t, p)["job"].ExecutionID, "the waiters took nothing")
	assert.Zero(t, pool.Stat().AcquiredConns(), "the waiter's connection is back in the pool")
	var channels int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM pg_listening_channels()").Scan(&channels))
	assert.Zero(t, channels, "the pool's only connection no longer listens")

	// The released lock goes to the next caller: no waiter is left behind.
	require.NoError(t, p.Release(ctx, []lock.Lease{held}))
	mustAcquire(t, p, "job", "next")
}

// TestAcquireWaitManyWaiters: every one of several waiters, each on its own
// connection, gets the lock in turn as the previous holder releases it, and
// each finds itself the holder. The pool has a connection for each waiter and one
// for the releases: waiters that took every connection would leave none
// for the Release they wait for.
func TestAcquireWaitManyWaiters(t *testing.T) {
	const n = 6
	pool := newPool(t, "lease-test", func(c *pgxpoolConfig) { c.MaxConns = n + 1 })
	p := providerOn(t, pool, WithLockTable(uniqueTable()))
	held := mustAcquire(t, p, "job", "holder")
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		tokens []uint64
	)
	c := waitCtx(t)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			exec := "w" + string(rune('a'+i))
			l, err := p.AcquireWait(c, "job", exec, long)
			if !assert.NoError(t, err) || !assert.NotNil(t, l) {
				return
			}
			h, ok, err := p.Holder(ctx, "job")
			assert.NoError(t, err)
			assert.True(t, ok && h.ExecutionID == exec && h.Token == l.Token, "holder %+v, want %s", h, exec)
			mu.Lock()
			tokens = append(tokens, l.Token)
			mu.Unlock()
			assert.NoError(t, p.Release(ctx, []lock.Lease{*l}))
		}()
	}
	require.NoError(t, p.Release(ctx, []lock.Lease{held}))
	wg.Wait()
	assert.Len(t, tokens, n)
	assert.True(t, slices.IsSorted(tokens), "tokens in the order granted: %v", tokens)
}

// TestManagerLockWaitsForRelease: lock.Manager.Lock over the provider, a
// Waiter, runs fn once the holder releases.
func TestManagerLockWaitsForRelease(t *testing.T) {
	p := newTestProvider(t)
	started := waiting(p)
	held := mustAcquire(t, p, "job", "holder")
	m := newManager(t, p, lock.WithExecutionID("m"))
	ran := make(chan uint64, 1)
	done := make(chan error, 1)
	go func() {
		done <- m.Lock(waitCtx(t), "job", func(_ context.Context, l lock.Lease) error {
			ran <- l.Token
			return nil
		})
	}()
	awaitWaiting(t, started, "job")
	require.NoError(t, p.Release(ctx, []lock.Lease{held}))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-waitCtx(t).Done():
		t.Fatal("Lock did not return")
	}
	assert.Greater(t, <-ran, held.Token)
	assert.True(t, rows(t, p)["job"].Released, "Lock releases when fn returns")
}

func TestAcquireWaitBadInput(t *testing.T) {
	p := newTestProvider(t)
	var nilCtx context.Context
	for _, tc := range []struct {
		field string
		call  func() (*lock.Lease, error)
	}{
		{"ctx", func() (*lock.Lease, error) { return p.AcquireWait(nilCtx, "n", "x", long) }},
		{"name", func() (*lock.Lease, error) { return p.AcquireWait(ctx, "", "x", long) }},
		{"executionID", func() (*lock.Lease, error) { return p.AcquireWait(ctx, "n", "", long) }},
		{"d", func() (*lock.Lease, error) { return p.AcquireWait(ctx, "n", "x", 0) }},
		{"name", func() (*lock.Lease, error) { return p.AcquireWait(ctx, "bad\x00", "x", long) }},
	} {
		l, err := tc.call()
		assert.Nil(t, l)
		requireInvalid(t, err, tc.field)
	}
	assert.Empty(t, rows(t, p), "nothing changed")
}

func TestAcquireWaitDatabaseErrors(t *testing.T) {
	p, err := NewLockProvider(newPool(t, "lease-test"), WithLockTable(uniqueTable()))
	require.NoError(t, err)
	_, err = p.AcquireWait(ctx, "n", "x", long)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	assert.Equal(t, "42P01", pgErr.Code, "undefined_table, got %v", err)
	assert.ErrorContains(t, err, "postgres: acquire wait")
}
