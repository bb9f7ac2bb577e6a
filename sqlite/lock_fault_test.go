package sqlite_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
	"github.com/leasehold/lease/sqlite"
)

const faultLease = time.Second

func init() {
	children["holder"] = holdLock
	children["leader"] = lead
	children["releaser"] = holdThenRelease
	children["notifier"] = enqueueLater
}

// holdThenRelease takes the lock args[1] for a minute, says "held TOKEN",
// releases it a quarter second later (time for the parent to start
// waiting), and says "released NANOS" with the time the Release returned.
func holdThenRelease(args []string) error {
	ctx, cancel := childContext()
	defer cancel()
	p, err := sqlite.NewLockProvider(ctx, args[0])
	if err != nil {
		return err
	}
	defer p.Close()
	l, err := p.Acquire(ctx, args[1], "holder", time.Minute)
	if err != nil || l == nil {
		return err
	}
	say("held %d", l.Token)
	<-time.After(250 * time.Millisecond)
	if err := p.Release(ctx, []lock.Lease{*l}); err != nil {
		return err
	}
	say("released %d", time.Now().UnixNano())
	return nil
}

// enqueueLater enqueues an item of queue args[1] a quarter second after it
// started and says "enqueued NANOS" with the time the Enqueue returned.
func enqueueLater(args []string) error {
	ctx, cancel := childContext()
	defer cancel()
	s, err := sqlite.NewClaimStore(ctx, args[0])
	if err != nil {
		return err
	}
	defer s.Close()
	say("ready")
	<-time.After(250 * time.Millisecond)
	if _, err := s.Enqueue(ctx, []claim.NewItem{{Queue: args[1], MaxAttempts: 1}}); err != nil {
		return err
	}
	say("enqueued %d", time.Now().UnixNano())
	return nil
}

// A release in one process wakes a waiter in another within the poll
// interval (plus slack for a loaded machine), long before the minute lease
// would have ended.
func TestReleaseWakesWaiterInAnotherProcess(t *testing.T) {
	t.Parallel()
	path := tempFile(t)
	p := newProvider(t, path)
	c := startChild(t, "releaser", path, "job")
	c.expect(t, "held ", 30*time.Second)
	got := make(chan time.Time, 1)
	go func() {
		l, err := p.AcquireWait(t.Context(), "job", "waiter", time.Minute)
		if err == nil && l != nil {
			got <- time.Now()
		}
		close(got)
	}()
	var released int64
	_, err := fmtSscan(c.expect(t, "released ", 30*time.Second), &released)
	require.NoError(t, err)
	at, ok := <-got
	require.True(t, ok, "AcquireWait failed")
	late := at.Sub(time.Unix(0, released))
	t.Logf("waiter took the lock %v after the other process's release (poll %v)", late, sqlite.DefaultPoll)
	require.Less(t, late, sqlite.DefaultPoll+time.Second)
}

// An enqueue in one process wakes an idle Notify waiter in another within
// the poll interval (plus slack for a loaded machine).
func TestEnqueueWakesNotifyInAnotherProcess(t *testing.T) {
	t.Parallel()
	path := tempFile(t)
	s := newClaimStore(t, path)
	c := startChild(t, "notifier", path, "q")
	c.expect(t, "ready", 30*time.Second)
	ready, stop := s.Notify("q")
	defer stop()
	var enqueued int64
	_, err := fmtSscan(c.expect(t, "enqueued ", 30*time.Second), &enqueued)
	require.NoError(t, err)
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("not woken")
	}
	late := time.Since(time.Unix(0, enqueued))
	t.Logf("woken %v after the other process's enqueue returned (poll %v)", late, sqlite.DefaultPoll)
	require.Less(t, late, sqlite.DefaultPoll+time.Second)
}

// holdLock takes the lock args[1] for a second and says "held TOKEN
// EXPIRES" (nanoseconds since the epoch), then waits to be killed without
// renewing.
func holdLock(args []string) error {
	ctx, cancel := childContext()
	defer cancel()
	p, err := sqlite.NewLockProvider(ctx, args[0])
	if err != nil {
		return err
	}
	defer p.Close()
	l, err := p.Acquire(ctx, args[1], "holder", faultLease)
	if err != nil || l == nil {
		return err
	}
	say("held %d %d", l.Token, l.ExpiresAt.UnixNano())
	<-ctx.Done()
	return nil
}

// lead campaigns in the election args[1] with leases of a second and says
// "leading TOKEN" once it leads, then keeps leading until killed.
func lead(args []string) error {
	ctx, cancel := childContext()
	defer cancel()
	p, err := sqlite.NewLockProvider(ctx, args[0])
	if err != nil {
		return err
	}
	defer p.Close()
	el, err := election.New(p, args[1], election.WithLeaseDuration(faultLease))
	if err != nil {
		return err
	}
	ld, err := el.Campaign(ctx, []byte("child"))
	if err != nil {
		return err
	}
	say("leading %d", ld.Token())
	<-ld.Context().Done()
	return context.Cause(ld.Context())
}

// TestKilledHolderHandsOver: a process holding a lock is killed with
// SIGKILL; a waiter in this process takes the lock once the lease ends
// (its timer on the clock fires then; a release would have woken it within
// a poll interval), with a greater token.
func TestKilledHolderHandsOver(t *testing.T) {
	t.Parallel()
	path := tempFile(t)
	p := newProvider(t, path)
	c := startChild(t, "holder", path, "job")
	var token, expires int64
	f := c.expect(t, "held ", 30*time.Second)
	_, err := fmtSscan(f, &token, &expires)
	require.NoError(t, err)
	c.kill()
	l, err := p.AcquireWait(t.Context(), "job", "waiter", time.Minute)
	require.NoError(t, err)
	late := time.Since(time.Unix(0, expires))
	t.Logf("taken %v after the killed holder's lease ended (poll %v)", late, sqlite.DefaultPoll)
	require.Greater(t, l.Token, uint64(token))
	// The slack is for a loaded machine: the race detector on two cores
	// shared with other tests. Unloaded, it is some tens of milliseconds.
	require.Less(t, late, sqlite.DefaultPoll+time.Second, "the waiter wakes at the lease's end")
}

// TestKilledLeaderReplaced: an election's leader process is killed with
// SIGKILL; a candidate in this process leads within the lease plus one
// renewal interval (a third of the lease) of the leader's last renewal,
// bounded here by the lease plus a renewal interval from the kill.
func TestKilledLeaderReplaced(t *testing.T) {
	t.Parallel()
	path := tempFile(t)
	p := newProvider(t, path)
	// Resign's release gets the retry interval as its deadline: a tenth of
	// the lease (100 ms) was too short once for a loaded machine.
	el, err := election.New(p, "leader", election.WithLeaseDuration(faultLease), election.WithRetryInterval(faultLease/2))
	require.NoError(t, err)
	c := startChild(t, "leader", path, "leader")
	childToken, err := strconv.ParseUint(c.expect(t, "leading ", 30*time.Second), 10, 64)
	require.NoError(t, err)
	campaign := make(chan *election.Leadership, 1)
	go func() {
		ld, err := el.Campaign(t.Context(), []byte("parent"))
		if err == nil {
			campaign <- ld
		}
		close(campaign)
	}()
	killed := time.Now()
	c.kill()
	var ld *election.Leadership
	select {
	case ld = <-campaign:
	case <-time.After(10 * time.Second):
		t.Fatal("no new leader")
	}
	require.NotNil(t, ld)
	took := time.Since(killed)
	t.Logf("new leader %v after the kill", took)
	require.Greater(t, ld.Token(), childToken)
	require.Less(t, took, faultLease+faultLease/3+time.Second, "slack for a loaded machine, as above")
	require.NoError(t, ld.Resign(context.Background()))
}
