package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

// acquire takes the lock name for executionID for an hour.
func (e *env) acquire(name, executionID string) *lock.Lease {
	e.t.Helper()
	l, err := e.locks.Acquire(ctx, name, executionID, time.Hour)
	require.NoError(e.t, err)
	require.NotNil(e.t, l)
	return l
}

// locks lists the locks held with holder, token and expiry, by prefix.
func TestLocks(t *testing.T) {
	e := newEnv(t)
	assert.Equal(t, []string{"LOCK HOLDER TOKEN EXPIRES WAITERS"}, lines(e.ok("locks")))
	a := e.acquire("jobs/a", "worker-1")
	b := e.acquire("jobs/b", "worker-two")
	e.acquire("other", "worker-1")
	gone := e.acquire("released", "w")
	require.NoError(t, e.locks.Release(ctx, []lock.Lease{*gone}))

	// Two callers wait for jobs/a.
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, id := range []string{"waiter-1", "waiter-2"} {
		wg.Go(func() {
			_, err := e.locks.AcquireWait(wctx, "jobs/a", id, time.Hour)
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	require.Eventually(t, func() bool {
		got := okJSON[[]lockJSON](e, "locks", "--prefix", "jobs/a")
		return len(got) == 1 && got[0].Waiters != nil && *got[0].Waiters == 2
	}, 10*time.Second, 20*time.Millisecond)

	out := e.ok("locks")
	ls := lines(out)
	require.Len(t, ls, 4, out)
	assert.Regexp(t, `^jobs/a worker-1 \d+ \S+Z 2$`, ls[1])
	assert.Regexp(t, `^jobs/b worker-two \d+ \S+Z 0$`, ls[2])
	assert.Regexp(t, `^other worker-1 \d+ \S+Z 0$`, ls[3])
	requireAligned(t, out)

	got := okJSON[[]lockJSON](e, "locks", "--prefix", "jobs/")
	require.Len(t, got, 2)
	two, none := 2, 0
	assert.Equal(t, lockJSON{Name: "jobs/a", Holder: "worker-1", Token: a.Token, ExpiresAt: got[0].ExpiresAt, Waiters: &two}, got[0])
	assert.Equal(t, &none, got[1].Waiters)
	assert.Equal(t, b.Token, got[1].Token)
	assert.WithinDuration(t, time.Now().Add(time.Hour), *got[0].ExpiresAt, time.Minute)
	assert.Len(t, okJSON[[]lockJSON](e, "locks", "--limit", "1"), 1)
	assert.Equal(t, "[]\n", e.ok("--json", "locks", "--prefix", "none/"))
	e.fails(exitUsage, "--limit must not be negative", "locks", "--limit", "-1")
}

// leaders shows who leads each election, named or found by prefix; an
// election named with nobody leading exits 3.
func TestLeaders(t *testing.T) {
	e := newEnv(t)
	el, err := election.New(e.locks, "elect/scheduler")
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	ld, err := el.Campaign(cctx, []byte("host-a:8080"))
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, ld.Resign(ctx))
		cancel()
	})

	out := e.ok("leaders", "elect/scheduler")
	ls := lines(out)
	require.Len(t, ls, 2, out)
	assert.Equal(t, "ELECTION LEADER TOKEN EXPIRES", ls[0])
	assert.Regexp(t, `^elect/scheduler host-a:8080 \d+ \S+Z$`, ls[1])
	requireAligned(t, out)

	got := okJSON[[]leaderJSON](e, "leaders", "--prefix", "elect/")
	require.Len(t, got, 1)
	assert.Equal(t, leaderJSON{Election: "elect/scheduler", Leader: true, Value: "host-a:8080", Token: ld.Token(),
		ExpiresAt: got[0].ExpiresAt}, got[0])

	// A lock taken by other means is an election without a value.
	e.acquire("elect/plain", "not-a-candidate")
	assert.Regexp(t, `^elect/plain - \d+ \S+Z$`, lines(e.ok("leaders", "elect/plain"))[1])
	assert.Len(t, okJSON[[]leaderJSON](e, "leaders"), 2)

	code, out, stderr := e.run("leaders", "elect/scheduler", "elect/nobody")
	assert.Equal(t, exitNotFound, code)
	assert.Equal(t, "ELECTION LEADER TOKEN EXPIRES", lines(out)[0])
	assert.Equal(t, "elect/nobody - - -", lines(out)[2])
	assert.Equal(t, "leasectl: a leader of elect/nobody: not found\n", stderr)
	code, out, _ = e.run("--json", "leaders", "elect/nobody")
	assert.Equal(t, exitNotFound, code)
	assert.JSONEq(t, `[{"election":"elect/nobody","leader":false}]`, out)
}
