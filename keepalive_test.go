package lease_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

func TestKeepAliveRenewsEveryThirdOfTTL(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.Operation, 3*time.Second)
	kctx, err := s.KeepAlive(ctx, l.ID)
	require.NoError(t, err)

	for i := 1; i <= 30; i++ {
		clk.Advance(time.Second)
		info, err := s.Info(ctx, l.ID)
		require.NoError(t, err, "kept alive after %d s", i)
		require.Equal(t, clk.Now(), info.RenewedAt, "renewed every TTL/3")
		require.Equal(t, clk.Now().Add(3*time.Second), info.ExpiresAt)
	}
	require.NoError(t, kctx.Err())
	require.Equal(t, 1, clk.Pending(), "keep-alive uses the service's one timer")
}

func TestKeepAliveStopsWithItsParent(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.Operation, 3*time.Second)
	parent, cancel := context.WithCancel(ctx)
	kctx, err := s.KeepAlive(parent, l.ID)
	require.NoError(t, err)
	clk.Advance(10 * time.Second) // renewed last at 10 s, expires at 13 s
	cancel()
	<-kctx.Done()
	require.ErrorIs(t, context.Cause(kctx), context.Canceled)

	clk.Advance(3*time.Second - time.Nanosecond)
	info, err := s.Info(ctx, l.ID)
	require.NoError(t, err, "left to expire, not revoked")
	require.Equal(t, t0.Add(10*time.Second), info.RenewedAt, "no renewal after the parent was done")
	clk.Advance(time.Nanosecond)
	_, err = s.Info(ctx, l.ID)
	requireCode(t, err, lease.CodeExpired, lease.ErrExpired)
}

func TestKeepAliveContextEndsWithTheLease(t *testing.T) {
	tests := []struct {
		name  string
		end   func(*testing.T, *lease.Service, lease.ID)
		cause error
	}{
		{"revoked", func(t *testing.T, s *lease.Service, id lease.ID) {
			_, err := s.Revoke(ctx, id)
			require.NoError(t, err)
		}, lease.ErrAlreadyRevoked},
		{"closed", func(t *testing.T, s *lease.Service, _ lease.ID) { require.NoError(t, s.Close()) }, lease.ErrClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newService(t)
			l := grant(t, s, lease.Operation, time.Second)
			kctx, err := s.KeepAlive(ctx, l.ID)
			require.NoError(t, err)
			tc.end(t, s, l.ID)
			<-kctx.Done()
			require.ErrorIs(t, context.Cause(kctx), tc.cause)
		})
	}
}

// TestKeepAliveEndsWhenExpiryWins covers a keep-alive whose lease was
// shortened below the renewal interval by RenewTTL: it still renews first.
func TestKeepAliveFollowsRenewTTL(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.Operation, time.Minute)
	kctx, err := s.KeepAlive(ctx, l.ID)
	require.NoError(t, err)
	_, err = s.RenewTTL(ctx, l.ID, 3*time.Second)
	require.NoError(t, err)
	clk.Advance(time.Minute)
	info, err := s.Info(ctx, l.ID)
	require.NoError(t, err)
	require.Equal(t, 3*time.Second, info.TTL)
	require.NoError(t, kctx.Err())
}

func TestSeveralKeepAlives(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.Operation, 3*time.Second)
	p1, cancel1 := context.WithCancel(ctx)
	k1, err := s.KeepAlive(p1, l.ID)
	require.NoError(t, err)
	k2, err := s.KeepAlive(ctx, l.ID)
	require.NoError(t, err)

	cancel1()
	<-k1.Done()
	clk.Advance(time.Minute)
	_, err = s.Info(ctx, l.ID)
	require.NoError(t, err, "still kept alive by the second keep-alive")
	require.NoError(t, k2.Err())

	_, err = s.Revoke(ctx, l.ID)
	require.NoError(t, err)
	require.ErrorIs(t, context.Cause(k2), lease.ErrAlreadyRevoked)
}

func TestKeepAliveIsAudited(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.Operation, 3*time.Second)
	_, err := s.KeepAlive(lease.WithTraceID(ctx, "trace-1"), l.ID)
	require.NoError(t, err)
	clk.Advance(2 * time.Second)
	var renewals []lease.Decision
	for _, d := range s.Audit() {
		if d.Action == lease.ActionRenew {
			renewals = append(renewals, d)
		}
	}
	require.Len(t, renewals, 3, "the start and two renewals")
	for _, d := range renewals {
		require.True(t, d.Allowed)
		require.Equal(t, "trace-1", d.TraceID)
	}
}

// TestKeepAliveRenewalsDueBeforeTheCancelStillHappen uses a clock whose
// timers never fire: renewals fall due with nobody settling them, then the
// parent is cancelled. The lease must not count as expired at an instant it
// was kept alive.
func TestKeepAliveRenewalsDueBeforeTheCancelStillHappen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := leasetest.NewFakeClock(t0)
		s := lease.Must(lease.New(lease.WithClock(leasetest.Stalled(clk))))
		defer s.Close()
		l := grant(t, s, lease.Operation, 3*time.Second)
		parent, cancel := context.WithCancel(ctx)
		_, err := s.KeepAlive(parent, l.ID)
		require.NoError(t, err)

		clk.Set(t0.Add(10 * time.Second))
		cancel()
		synctest.Wait() // the parent-done callback has run

		info, err := s.Info(ctx, l.ID)
		require.NoError(t, err)
		require.Equal(t, t0.Add(10*time.Second), info.RenewedAt, "renewed up to the cancel")
		require.Equal(t, t0.Add(13*time.Second), info.ExpiresAt)
	})
}

// TestKeepAliveCatchUpIsOneRenewal stalls a keep-alive renewed every
// nanosecond for a millisecond with no timer firing: the next call makes
// one renewal, at the last instant one was due, instead of replaying a
// million of them under the service's lock.
func TestKeepAliveCatchUpIsOneRenewal(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	s := lease.Must(lease.New(lease.WithClock(leasetest.Stalled(clk))))
	defer s.Close()
	l := grant(t, s, lease.Operation, 3) // renewed every 1ns
	kctx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, err := s.KeepAlive(kctx, l.ID)
	require.NoError(t, err)
	rev := s.Revision()
	before := len(s.Audit())

	clk.Advance(time.Millisecond)
	got, err := s.Info(ctx, l.ID)
	require.NoError(t, err)
	assert.Equal(t, clk.Now(), got.RenewedAt, "renewed at the last instant one was due")
	assert.Equal(t, rev+1, s.Revision(), "one renewal")
	assert.Equal(t, before+1, len(s.Audit()), "one decision")
}

// TestKeepAliveDoneMeansDropped checks that the context KeepAlive returns is
// done only once the service has dropped the keep-alive: a test that waits
// for it and then advances a fake clock sees no renewal after the cancel,
// however the parent-done callback was scheduled. Repeated, because before
// the context waited for the callback the clock could move first, now and
// then, and the callback then renewed the lease up to the new time.
func TestKeepAliveDoneMeansDropped(t *testing.T) {
	for range 300 {
		s, clk := newService(t)
		l := grant(t, s, lease.Operation, 3*time.Second)
		parent, cancel := context.WithCancel(ctx)
		kctx, err := s.KeepAlive(parent, l.ID)
		require.NoError(t, err)
		cancel()
		<-kctx.Done()
		clk.Advance(3*time.Second - time.Nanosecond)
		info, err := s.Info(ctx, l.ID)
		require.NoError(t, err)
		require.Equal(t, l.GrantedAt, info.RenewedAt, "renewed after the keep-alive's context was done")
		require.NoError(t, s.Close())
	}
}
