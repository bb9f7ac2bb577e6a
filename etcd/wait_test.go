package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasehold/lease/lock"
)

// TestAcquireWaitOutlastsASkewedExpiry: a key whose recorded ExpiresAt has
// passed while its etcd lease lives on (a holder's clock running ahead)
// stays held for AcquireWait too, past ExpiryWait, until etcd deletes the
// key; then the waiter gets the lock, with its value.
func TestAcquireWaitOutlastsASkewedExpiry(t *testing.T) {
	p := newTestProvider(t)
	ctx := context.Background()
	_, rev := putSkewed(t, p, "x", 2)
	start := time.Now()
	l, err := p.AcquireWaitValue(ctx, "x", "b", time.Minute, []byte("b's"))
	require.NoError(t, err)
	require.NotNil(t, l)
	assert.Greater(t, time.Since(start), ExpiryWait, "it waited for etcd's expiry, not for ExpiryWait")
	assert.Greater(t, l.Token, uint64(rev))
	got, ok, err := p.Holder(ctx, "x")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []byte("b's"), got.Value)
	assert.Equal(t, l.Token, got.Token)
}

// waitResult is what an AcquireWait returned.
type waitResult struct {
	l   *lock.Lease
	err error
}

// startWaiter runs AcquireWait on a goroutine and returns its result.
func startWaiter(ctx context.Context, p *Provider, name, exec string) <-chan waitResult {
	ch := make(chan waitResult, 1)
	go func() {
		l, err := p.AcquireWaitValue(ctx, name, exec, time.Minute, []byte(exec))
		ch <- waitResult{l, err}
	}()
	return ch
}

// awaitQueue waits until name's queue holds exactly n keys, reading etcd
// and watching the queue between reads, and returns the keys in order of
// creation.
func awaitQueue(t *testing.T, p *Provider, name string, n int) []*mvccpb.KeyValue {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		resp, err := testClient.Get(ctx, p.queuePrefix(name), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
		require.NoError(t, err)
		if len(resp.Kvs) == n {
			return resp.Kvs
		}
		wctx, stop := context.WithCancel(ctx)
		wch := testClient.Watch(wctx, p.queuePrefix(name), clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1))
		_, ok := <-wch
		stop()
		require.True(t, ok, "the queue of %q did not reach %d keys", name, n)
	}
}

// received returns what ch delivers, failing the test after a while.
func received(t *testing.T, ch <-chan waitResult, what string) waitResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: AcquireWait did not return", what)
		return waitResult{}
	}
}

// mustAcquire takes the free lock name for exec, for a minute.
func mustAcquire(t *testing.T, p *Provider, name, exec string) *lock.Lease {
	t.Helper()
	l, err := p.Acquire(t.Context(), name, exec, time.Minute)
	require.NoError(t, err)
	require.NotNil(t, l)
	return l
}

// handedOff returns the lease that the waiter ch of exec got.
func handedOff(t *testing.T, ch <-chan waitResult, exec string) lock.Lease {
	t.Helper()
	r := received(t, ch, exec)
	require.NoError(t, r.err, exec)
	require.NotNil(t, r.l, exec)
	assert.Equal(t, exec, r.l.ExecutionID, "the lock went to the waiter whose turn it was")
	return *r.l
}

// TestAcquireWaitIsFIFO: waiters that queued one after the other get the
// lock in that order, each with a greater token; the queue keys are not
// locks for Holder and Held, and each leaves the queue as it takes the lock.
func TestAcquireWaitIsFIFO(t *testing.T) {
	p := newTestProvider(t)
	ctx := t.Context()
	h := mustAcquire(t, p, "x", "holder")
	execs := []string{"w0", "w1", "w2", "w3", "w4"}
	chs := make([]<-chan waitResult, len(execs))
	for i, e := range execs {
		chs[i] = startWaiter(ctx, p, "x", e)
		q := awaitQueue(t, p, "x", i+1)
		assert.Equal(t, queueTag+e, string(q[i].Value), "the newest waiter is last")
	}
	held, err := p.Held(ctx, "", 0)
	require.NoError(t, err)
	require.Len(t, held, 1, "queue keys are not locks")
	assert.Equal(t, "holder", held[0].ExecutionID)

	prev := *h
	require.NoError(t, p.Release(ctx, []lock.Lease{prev}))
	for i, e := range execs {
		l := handedOff(t, chs[i], e)
		assert.Greater(t, l.Token, prev.Token)
		got, ok, err := p.Holder(ctx, "x")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, []byte(e), got.Value)
		awaitQueue(t, p, "x", len(execs)-i-1)
		prev = l
		require.NoError(t, p.Release(ctx, []lock.Lease{prev}))
	}
}

// TestAcquireWaitGivingUpLeavesTheQueue: a waiter whose ctx ends has
// deleted its queue key by the time it returns, and the waiter behind it
// is next.
func TestAcquireWaitGivingUpLeavesTheQueue(t *testing.T) {
	p := newTestProvider(t)
	ctx := t.Context()
	h := mustAcquire(t, p, "x", "holder")
	quit, cancel := context.WithCancel(ctx)
	defer cancel()
	first := startWaiter(quit, p, "x", "quitter")
	awaitQueue(t, p, "x", 1)
	second := startWaiter(ctx, p, "x", "patient")
	awaitQueue(t, p, "x", 2)
	cancel()
	r := received(t, first, "quitter")
	require.ErrorIs(t, r.err, context.Canceled)
	assert.Nil(t, r.l)
	resp, err := testClient.Get(ctx, p.queuePrefix("x"), clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	assert.EqualValues(t, 1, resp.Count, "the quitter's key is gone when it returns")

	require.NoError(t, p.Release(ctx, []lock.Lease{*h}))
	require.NoError(t, p.Release(ctx, []lock.Lease{handedOff(t, second, "patient")}))
}

// TestAcquireWaitOutlivesACrashedWaiter: the queue key of a waiter that
// died (no keep-alives) goes with its etcd lease, and the waiter behind it
// then gets the lock.
func TestAcquireWaitOutlivesACrashedWaiter(t *testing.T) {
	p := newTestProvider(t)
	ctx := t.Context()
	h := mustAcquire(t, p, "x", "holder")
	g, err := testClient.Grant(ctx, 1)
	require.NoError(t, err)
	_, err = testClient.Put(ctx, fmt.Sprintf("%s%016x", p.queuePrefix("x"), uint64(g.ID)), queueTag+"crashed", clientv3.WithLease(g.ID))
	require.NoError(t, err)
	w := startWaiter(ctx, p, "x", "w")
	awaitQueue(t, p, "x", 2)
	require.NoError(t, p.Release(ctx, []lock.Lease{*h}))
	l := handedOff(t, w, "w")
	ttl, err := testClient.TimeToLive(ctx, g.ID)
	require.NoError(t, err)
	assert.EqualValues(t, -1, ttl.TTL, "the waiter got the lock once the crashed one's lease was gone")
	awaitQueue(t, p, "x", 0)
	require.NoError(t, p.Release(ctx, []lock.Lease{l}))
}

// TestGoneSeesADeleteOnEitherSideOfTheWatch: gone reports a delete that
// came before its watch (the store moved on since the read, so it watches
// from the present and reads the key again) and one that comes after, and
// returns false when its ctx ends first.
func TestGoneSeesADeleteOnEitherSideOfTheWatch(t *testing.T) {
	p := newTestProvider(t)
	ctx := t.Context()
	read := func() (*mvccpb.KeyValue, int64) {
		_, err := testClient.Put(ctx, p.key("x"), "v")
		require.NoError(t, err)
		resp, err := testClient.Get(ctx, p.key("x"))
		require.NoError(t, err)
		require.Len(t, resp.Kvs, 1)
		return resp.Kvs[0], resp.Header.Revision
	}

	kv, at := read()
	_, err := testClient.Delete(ctx, p.key("x"))
	require.NoError(t, err)
	assert.True(t, p.gone(ctx, kv, at), "deleted before the watch")

	kv, at = read()
	done := make(chan bool, 1)
	go func() { done <- p.gone(ctx, kv, at) }()
	_, err = testClient.Delete(ctx, p.key("x"))
	require.NoError(t, err)
	select {
	case ok := <-done:
		assert.True(t, ok, "deleted after the watch")
	case <-time.After(10 * time.Second):
		t.Fatal("gone did not see the delete")
	}

	kv, at = read()
	short, cancel := context.WithCancel(ctx)
	cancel()
	assert.False(t, p.gone(short, kv, at), "ctx done, key still there")
}

// TestAcquireWaitQueuesBehindAWaiterOfAFreeLock: a new waiter does not
// take a free lock while someone is queued for it, but queues behind; it
// takes the lock once the queue ahead of it is gone.
func TestAcquireWaitQueuesBehindAWaiterOfAFreeLock(t *testing.T) {
	p := newTestProvider(t)
	ctx := t.Context()
	g, err := testClient.Grant(ctx, 60)
	require.NoError(t, err)
	ahead := fmt.Sprintf("%s%016x", p.queuePrefix("x"), uint64(g.ID))
	_, err = testClient.Put(ctx, ahead, queueTag+"ahead", clientv3.WithLease(g.ID))
	require.NoError(t, err)
	w := startWaiter(ctx, p, "x", "w")
	awaitQueue(t, p, "x", 2)
	_, ok, err := p.Holder(ctx, "x")
	require.NoError(t, err)
	assert.False(t, ok, "the free lock is not taken past the queue")
	_, err = testClient.Revoke(ctx, g.ID)
	require.NoError(t, err)
	require.NoError(t, p.Release(ctx, []lock.Lease{handedOff(t, w, "w")}))
}

// TestAcquireWaitUnderContention: waiters that queue all at once, some of
// them giving up, each find themselves the lock's holder until they
// release it, with a token greater than the one before, and leave the
// queue empty.
func TestAcquireWaitUnderContention(t *testing.T) {
	p := newTestProvider(t)
	const workers, rounds = 6, 3
	var mu sync.Mutex
	var last uint64
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				ctx, cancel := context.WithCancel(t.Context())
				if (w+r)%4 == 3 {
					cancel() // a waiter that gives up at once
				}
				l, err := p.AcquireWait(ctx, "x", fmt.Sprintf("w%d-%d", w, r), time.Minute)
				cancel()
				if err != nil {
					if !errors.Is(err, context.Canceled) {
						errs <- err
					}
					continue
				}
				mu.Lock()
				if l.Token <= last {
					errs <- fmt.Errorf("token %d after %d", l.Token, last)
				}
				last = l.Token
				mu.Unlock()
				if h, ok, err := p.Holder(t.Context(), "x"); err != nil || !ok || h.ExecutionID != l.ExecutionID {
					errs <- fmt.Errorf("%s holds, but Holder says %+v, %v, %v", l.ExecutionID, h, ok, err)
				}
				if err := p.Release(t.Context(), []lock.Lease{*l}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	awaitQueue(t, p, "x", 0)
}
