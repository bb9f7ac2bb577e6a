package replicated

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// lockOn returns a provider on node i of c.
func lockOn(t *testing.T, c *cluster, i int, opts ...LockOption) *LockProvider {
	t.Helper()
	p, err := NewLockProvider(c.nodes[i], opts...)
	require.NoError(t, err)
	return p
}

// followers returns the indexes of the running nodes other than leader.
func (c *cluster) followers(leader int) []int {
	var out []int
	for i := range c.nodes {
		if i != leader && c.node(i) != nil {
			out = append(out, i)
		}
	}
	return out
}

func TestNewLockProviderRefusesBadInput(t *testing.T) {
	c := newCluster(t, clusterOpts{size: 1})
	n := c.nodes[0]
	for _, tt := range []struct {
		name  string
		n     *Node
		opts  []LockOption
		field string
	}{
		{"nil node", nil, nil, "n"},
		{"nil option", n, []LockOption{nil}, "LockOption"},
		{"empty prefix", n, []LockOption{WithLockPrefix("")}, "WithLockPrefix"},
		{"bad purpose", n, []LockOption{WithLockPurpose(lease.Purpose(200))}, "WithLockPurpose"},
		{"zero recheck", n, []LockOption{WithLockRecheck(0)}, "WithLockRecheck"},
		{"first refused is reported", n, []LockOption{WithLockRecheck(-time.Second), WithLockPrefix("")}, "WithLockRecheck"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewLockProvider(tt.n, tt.opts...)
			require.ErrorIs(t, err, lease.ErrInvalidArgument)
			assert.Nil(t, p)
			var le *lease.Error
			require.ErrorAs(t, err, &le)
			assert.Equal(t, "replicated", le.Package)
			assert.Equal(t, tt.field, le.Field)
		})
	}
}

// Bad input to the provider's calls is refused in this package's voice,
// naming the field, as lock's checks name it.
func TestLockProviderInputErrorsAreReplicated(t *testing.T) {
	c := newCluster(t, clusterOpts{size: 1})
	p := lockOn(t, c, 0)
	ctx := ctxT(t)
	_, err1 := p.Acquire(ctx, "", "e", time.Second)
	_, err2 := p.AcquireWaitValue(ctx, "x", "e", time.Second, make([]byte, lock.MaxValueSize+1))
	_, err3 := p.Renew(ctx, []lock.Lease{{Name: "x"}}, time.Second)
	err4 := p.Release(ctx, []lock.Lease{{ExecutionID: "e"}})
	_, _, err5 := p.Holder(ctx, "")
	_, err6 := p.Held(ctx, "", -1)
	_, err7 := p.Waiting(ctx, "x", -1)
	for i, tt := range []struct {
		err   error
		field string
	}{{err1, "name"}, {err2, "value"}, {err3, "leases[0].ExecutionID"}, {err4, "leases[0].Name"}, {err5, "name"}, {err6, "limit"}, {err7, "limit"}} {
		var le *lease.Error
		require.ErrorAs(t, tt.err, &le, "call %d", i+1)
		assert.Equal(t, lease.CodeInvalidArgument, le.Code, "call %d", i+1)
		assert.Equal(t, "replicated", le.Package, "call %d", i+1)
		assert.Equal(t, tt.field, le.Field, "call %d", i+1)
		assert.Regexp(t, "^replicated: ", le.Error())
	}
}

// A lock taken through one node is seen, with its token and value, through
// every other, and refused to anyone else there.
func TestLockHeldOnOneNodeIsSeenOnEvery(t *testing.T) {
	c := lockCluster(t, 3)
	ctx := ctxT(t)
	leader := c.leader()
	fs := c.followers(leader)
	a := lockOn(t, c, fs[0])
	l, err := a.AcquireValue(ctx, "jobs", "worker-a", time.Minute, []byte("10.0.0.1:8080"))
	require.NoError(t, err)
	require.NotNil(t, l)
	for _, i := range []int{leader, fs[1]} {
		b := lockOn(t, c, i)
		h, ok, err := b.Holder(ctx, "jobs")
		require.NoError(t, err)
		require.True(t, ok, "node %d", i)
		assert.Equal(t, lock.Holding{Name: "jobs", ExecutionID: "worker-a", Token: l.Token, ExpiresAt: l.ExpiresAt, Value: []byte("10.0.0.1:8080")}, h)
		held, err := b.Held(ctx, "", 0)
		require.NoError(t, err)
		assert.Equal(t, []lock.Holding{h}, held)
		got, err := b.Acquire(ctx, "jobs", "worker-b", time.Minute)
		require.NoError(t, err)
		assert.Nil(t, got, "node %d granted a held lock", i)
		// Renewing through another node keeps the token.
		renewed, err := b.Renew(ctx, []lock.Lease{*l}, time.Minute)
		require.NoError(t, err)
		require.Len(t, renewed, 1)
		assert.Equal(t, l.Token, renewed[0].Token)
		l = &renewed[0]
	}
}

// waitRefused waits until the leader has applied an entry past index: the
// waiter's first attempt, refused while the lock is held.
func waitRefused(t *testing.T, c *cluster, leader int, index uint64) {
	t.Helper()
	require.Eventually(t, func() bool { return c.nodes[leader].Status().AppliedIndex > index },
		waitLimit, time.Millisecond, "the waiter never tried")
}

// A waiter on a follower is woken when its node applies the release made
// through another node: its recheck is an hour, so nothing else can wake
// it, and the hand-off takes a commit, not a poll.
func TestLockWaiterOnFollowerWokenByReleaseElsewhere(t *testing.T) {
	c := lockCluster(t, 3)
	ctx := ctxT(t)
	leader := c.leader()
	fs := c.followers(leader)
	holder := lockOn(t, c, fs[0])
	waiter := lockOn(t, c, fs[1], WithLockRecheck(time.Hour))

	l, err := holder.Acquire(ctx, "jobs", "a", time.Minute)
	require.NoError(t, err)
	require.NotNil(t, l)
	before := c.nodes[leader].Status().AppliedIndex
	got := make(chan *lock.Lease, 1)
	go func() {
		w, err := waiter.AcquireWait(ctx, "jobs", "b", time.Minute)
		assert.NoError(t, err)
		got <- w
	}()
	waitRefused(t, c, leader, before)
	require.Equal(t, 1, waiter.locks.Queued("jobs"))

	start := time.Now()
	require.NoError(t, holder.Release(ctx, []lock.Lease{*l}))
	var w *lock.Lease
	select {
	case w = <-got:
	case <-time.After(waitLimit):
		t.Fatal("the waiter was not woken")
	}
	handOff := time.Since(start)
	t.Logf("hand-off from a release on node %d to a waiter on node %d: %v", fs[0], fs[1], handOff)
	require.NotNil(t, w)
	assert.Greater(t, w.Token, l.Token)
	assert.Less(t, handOff, 5*time.Second, "a hand-off is a commit or two, not a recheck")
}

// A waiter on a follower is woken when its node applies the expiry of the
// holder's lease, which the holder, on the leader, stopped renewing.
func TestLockWaiterOnFollowerWokenByExpiry(t *testing.T) {
	c := lockCluster(t, 3)
	ctx := ctxT(t)
	leader := c.leader()
	holder := lockOn(t, c, leader)
	waiter := lockOn(t, c, c.followers(leader)[0], WithLockRecheck(time.Hour))

	l, err := holder.Acquire(ctx, "jobs", "a", time.Second)
	require.NoError(t, err)
	require.NotNil(t, l)
	w, err := waiter.AcquireWait(ctx, "jobs", "b", time.Minute)
	require.NoError(t, err)
	late := time.Since(l.ExpiresAt)
	t.Logf("taken over %v after the holder's expiry", late)
	assert.GreaterOrEqual(t, late, time.Duration(0), "taken over before the holder's lease expired")
	assert.Less(t, late, 5*time.Second)
	assert.Greater(t, w.Token, l.Token)
}

// Waiters of one node are served in the order they came.
func TestLockWaitersOfANodeFirstComeFirstServed(t *testing.T) {
	c := lockCluster(t, 3)
	ctx := ctxT(t)
	leader := c.leader()
	fs := c.followers(leader)
	holder := lockOn(t, c, leader)
	waiter := lockOn(t, c, fs[0], WithLockRecheck(time.Hour))

	l, err := holder.Acquire(ctx, "jobs", "holder", time.Minute)
	require.NoError(t, err)
	require.NotNil(t, l)
	const n = 4
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	for i := range n {
		exec := string(rune('a' + i))
		wg.Go(func() {
			w, err := waiter.AcquireWait(ctx, "jobs", exec, time.Minute)
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			order = append(order, exec)
			mu.Unlock()
			assert.NoError(t, waiter.Release(ctx, []lock.Lease{*w}))
		})
		require.Eventually(t, func() bool { return waiter.locks.Queued("jobs") == i+1 }, waitLimit, time.Millisecond)
	}
	ws, err := waiter.Waiting(ctx, "jobs", 0)
	require.NoError(t, err)
	require.Len(t, ws, n)
	for i, w := range ws {
		assert.Equal(t, string(rune('a'+i)), w.ExecutionID)
	}
	require.NoError(t, holder.Release(ctx, []lock.Lease{*l}))
	wg.Wait()
	assert.Equal(t, []string{"a", "b", "c", "d"}, order)
}

// A lock outlives its leader: after the leader dies, the holder's token is
// still the lock's, its renewal through another node keeps it, nobody else
// is granted the lock, and a Fence orders the next holder after it.
func TestLockSurvivesLeaderChange(t *testing.T) {
	c := lockCluster(t, 3)
	ctx := ctxT(t)
	old := c.leader()
	fs := c.followers(old)
	a, b := lockOn(t, c, fs[0]), lockOn(t, c, fs[1])
	const d = 10 * time.Second // outlasts an election on a loaded machine
	l, err := a.Acquire(ctx, "jobs", "a", d)
	require.NoError(t, err)
	require.NotNil(t, l)
	var fence lock.Fence
	require.NoError(t, fence.Check("jobs", l.Token))

	c.stop(old)
	c.leaderOtherThan(old)

	h, ok, err := b.Holder(ctx, "jobs")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, l.Token, h.Token)
	assert.Equal(t, "a", h.ExecutionID)
	other, err := b.Acquire(ctx, "jobs", "b", d)
	require.NoError(t, err)
	assert.Nil(t, other, "a second holder after the leader change")
	renewed, err := b.Renew(ctx, []lock.Lease{*l}, d)
	require.NoError(t, err)
	require.Len(t, renewed, 1)
	assert.Equal(t, l.Token, renewed[0].Token)
	require.NoError(t, fence.Check("jobs", renewed[0].Token))

	require.NoError(t, a.Release(ctx, []lock.Lease{*l}))
	next, err := b.Acquire(ctx, "jobs", "b", d)
	require.NoError(t, err)
	require.NotNil(t, next)
	assert.Greater(t, next.Token, l.Token)
	require.NoError(t, fence.Check("jobs", next.Token))
	require.ErrorIs(t, fence.Check("jobs", l.Token), lock.ErrStaleToken, "the old holder's late write")
}

// A waiter stops waiting when its node closes, with an error matching
// lease.ErrClosed, and the provider refuses every call afterwards.
func TestLockWaiterEndsWhenNodeCloses(t *testing.T) {
	c := lockCluster(t, 3)
	ctx := ctxT(t)
	leader := c.leader()
	f := c.followers(leader)[0]
	holder := lockOn(t, c, leader)
	waiter := lockOn(t, c, f, WithLockRecheck(time.Hour))
	l, err := holder.Acquire(ctx, "jobs", "a", time.Minute)
	require.NoError(t, err)
	require.NotNil(t, l)
	errc := make(chan error, 1)
	go func() {
		_, err := waiter.AcquireWait(ctx, "jobs", "b", time.Minute)
		errc <- err
	}()
	require.Eventually(t, func() bool { return waiter.locks.Queued("jobs") == 1 }, waitLimit, time.Millisecond)
	c.stop(f)
	select {
	case err := <-errc:
		require.ErrorIs(t, err, lease.ErrClosed)
	case <-time.After(waitLimit):
		t.Fatal("the waiter did not stop")
	}
	_, err = waiter.Acquire(ctx, "other", "b", time.Minute)
	require.ErrorIs(t, err, lease.ErrClosed)
	_, err = waiter.Renew(ctx, []lock.Lease{*l}, time.Minute)
	require.ErrorIs(t, err, lease.ErrClosed)
	require.ErrorIs(t, waiter.Release(ctx, []lock.Lease{*l}), lease.ErrClosed)
	_, _, err = waiter.Holder(ctx, "jobs")
	require.ErrorIs(t, err, lease.ErrClosed)
	var le *lease.Error
	require.True(t, errors.As(err, &le))
	assert.Equal(t, "replicated", le.Package)
}

// A waiter whose node never applies the ending it waits for (here: the
// lock's key deleted outside the provider, which ends no lease) tries
// again after its recheck interval.
func TestLockWaiterRechecksWithoutAnEnding(t *testing.T) {
	c := lockCluster(t, 1)
	ctx := ctxT(t)
	holder := lockOn(t, c, 0)
	waiter := lockOn(t, c, 0, WithLockRecheck(100*time.Millisecond))
	l, err := holder.Acquire(ctx, "jobs", "a", time.Minute)
	require.NoError(t, err)
	require.NotNil(t, l)
	got := make(chan *lock.Lease, 1)
	go func() {
		w, err := waiter.AcquireWait(ctx, "jobs", "b", time.Minute)
		assert.NoError(t, err)
		got <- w
	}()
	require.Eventually(t, func() bool { return waiter.locks.Queued("jobs") == 1 }, waitLimit, time.Millisecond)
	ok, err := c.nodes[0].Delete(ctx, "lock/jobs")
	require.NoError(t, err)
	require.True(t, ok)
	select {
	case w := <-got:
		require.NotNil(t, w)
		assert.Greater(t, w.Token, l.Token)
	case <-time.After(waitLimit):
		t.Fatal("the waiter never tried again")
	}
}

// A Manager runs a function under a lock of the cluster and renews it on
// its own clock: the provider is not a TimeBase.
func TestLockProviderUnderManager(t *testing.T) {
	c := lockCluster(t, 3)
	ctx := ctxT(t)
	leader := c.leader()
	p := lockOn(t, c, c.followers(leader)[0])
	_, isTimeBase := any(p).(lockprovider.TimeBase)
	require.False(t, isTimeBase)
	m, err := lock.NewManager(p, lock.WithLeaseDuration(2*time.Second), lock.WithExecutionID("mgr"))
	require.NoError(t, err)
	other := lockOn(t, c, leader)
	res, err := lock.DoWait(ctx, m, "jobs", func(ctx context.Context, l lock.Lease) (uint64, error) {
		h, ok, err := other.Holder(ctx, "jobs")
		if err != nil {
			return 0, err
		}
		if !ok || h.ExecutionID != "mgr" {
			return 0, errors.New("the holder is not seen on the leader")
		}
		return l.Token, nil
	})
	require.NoError(t, err)
	assert.NotZero(t, res.Value)
	_, ok, err := other.Holder(ctx, "jobs")
	require.NoError(t, err)
	assert.False(t, ok, "released once the function returned")
}

// The provider's waking rests on this: every node, followers included,
// reports the ending of a lock's lease as it applies it, with the lock's
// key among the keys deleted, for a release and for an expiry alike.
func TestLockEndingReportedOnEveryNode(t *testing.T) {
	c := lockCluster(t, 3)
	ctx := ctxT(t)
	ends := make([]*endings, len(c.nodes))
	for i, n := range c.nodes {
		ends[i] = watchEnds(n)
		defer ends[i].stop()
	}
	p := lockOn(t, c, c.followers(c.leader())[0])
	l, err := p.Acquire(ctx, "released", "a", time.Minute)
	require.NoError(t, err)
	require.NoError(t, p.Release(ctx, []lock.Lease{*l}))
	for i := range c.nodes {
		e := ends[i].next(t)
		assert.Equal(t, lease.EndRevoked, e.reason, "node %d", i)
		assert.Equal(t, []string{"lock/released"}, e.l.Keys, "node %d", i)
	}
	l, err = p.Acquire(ctx, "expired", "a", 500*time.Millisecond)
	require.NoError(t, err)
	for i := range c.nodes {
		e := ends[i].next(t)
		assert.Equal(t, lease.EndExpired, e.reason, "node %d", i)
		assert.Equal(t, lease.ID(l.Token), e.l.ID, "node %d", i)
		assert.Equal(t, []string{"lock/expired"}, e.l.Keys, "node %d", i)
	}
}
