package lease_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// TestHooksMayCallBack has an expiry hook grant, renew, revoke and read from
// inside the hook: nothing deadlocks and the hook's own changes are seen.
func TestHooksMayCallBack(t *testing.T) {
	var s *lease.Service
	var successors []lease.ID
	var sinkSawAudit int
	s, clk := newService(t,
		auditFunc(func(lease.Decision) { sinkSawAudit = len(s.Audit()) }),
	)
	onExpired(s, func(l lease.Lease) {
		next, err := s.Grant(ctx, l.Holder, l.Purpose, l.TTL)
		require.NoError(t, err)
		require.NoError(t, s.Put(ctx, "successor", nil, next.ID))
		_, err = s.Renew(ctx, next.ID)
		require.NoError(t, err)
		_, err = s.Info(ctx, l.ID)
		require.ErrorIs(t, err, lease.ErrExpired)
		successors = append(successors, next.ID)
	})
	stop := s.OnEnd(func(_ lease.Lease, r lease.EndReason) {
		if r == lease.EndExpired && len(successors) == 1 {
			_, err := s.Revoke(ctx, successors[0]) // ends another lease from inside a subscriber
			require.NoError(t, err)
		}
	})
	defer stop()
	grant(t, s, lease.Operation, time.Second)
	clk.Advance(time.Second)

	require.Len(t, successors, 1)
	_, err := s.Info(ctx, successors[0])
	require.ErrorIs(t, err, lease.ErrAlreadyRevoked, "the subscriber's revoke ran after the hook's grant")
	require.Positive(t, sinkSawAudit)
}

func TestNotificationsArriveInDecisionOrder(t *testing.T) {
	var got []string
	s, clk := newService(t, auditFunc(func(d lease.Decision) { got = append(got, string(d.Action)) }))
	stop := s.OnEnd(func(_ lease.Lease, r lease.EndReason) { got = append(got, "end:"+r.String()) })
	defer stop()
	a := grant(t, s, lease.Operation, time.Second)
	b := grant(t, s, lease.Operation, time.Hour)
	clk.Advance(time.Second)
	_, err := s.Revoke(ctx, b.ID)
	require.NoError(t, err)
	_, err = s.Use(ctx, a.ID, lease.Operation)
	require.Error(t, err)
	require.Equal(t, []string{"grant", "grant", "expire", "end:expired", "revoke", "end:revoked", "use"}, got)
}
