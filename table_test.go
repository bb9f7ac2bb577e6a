package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// lease states a test can put a lease in; each returns the lease's ID.
var states = map[string]func(t *testing.T, s *lease.Service, clk interface{ Advance(time.Duration) }) lease.ID{
	"active": func(t *testing.T, s *lease.Service, _ interface{ Advance(time.Duration) }) lease.ID {
		return grant(t, s, lease.Operation, time.Minute).ID
	},
	"expired": func(t *testing.T, s *lease.Service, clk interface{ Advance(time.Duration) }) lease.ID {
		l := grant(t, s, lease.Operation, time.Minute)
		clk.Advance(time.Minute)
		return l.ID
	},
	"revoked": func(t *testing.T, s *lease.Service, _ interface{ Advance(time.Duration) }) lease.ID {
		l := grant(t, s, lease.Operation, time.Minute)
		_, err := s.Revoke(ctx, l.ID)
		require.NoError(t, err)
		return l.ID
	},
	"unknown": func(*testing.T, *lease.Service, interface{ Advance(time.Duration) }) lease.ID {
		return 99
	},
}

// TestOperationByState checks every cell of the operation x state table in
// docs/semantics.md.
func TestOperationByState(t *testing.T) {
	ops := map[string]func(s *lease.Service, id lease.ID) error{
		"Renew": func(s *lease.Service, id lease.ID) error { _, err := s.Renew(ctx, id); return err },
		"Use":   func(s *lease.Service, id lease.ID) error { _, err := s.Use(ctx, id, lease.Operation); return err },
		"Revoke": func(s *lease.Service, id lease.ID) error {
			_, err := s.Revoke(ctx, id)
			return err
		},
		"Info": func(s *lease.Service, id lease.ID) error { _, err := s.Info(ctx, id); return err },
		"Put":  func(s *lease.Service, id lease.ID) error { return s.Put(ctx, "k", []byte("v"), id) },
		"KeepAlive": func(s *lease.Service, id lease.ID) error {
			_, err := s.KeepAlive(ctx, id)
			return err
		},
	}
	type want struct {
		code     lease.Code
		sentinel error
	}
	expired := want{lease.CodeExpired, lease.ErrExpired}
	revoked := want{lease.CodeAlreadyRevoked, lease.ErrAlreadyRevoked}
	stale := want{lease.CodeStaleUse, lease.ErrStaleUse}
	notFound := want{lease.CodeNotFound, lease.ErrNotFound}
	table := []struct {
		op, state string
		want      want // zero: success
	}{
		{"Renew", "active", want{}}, {"Renew", "expired", expired}, {"Renew", "revoked", revoked}, {"Renew", "unknown", notFound},
		{"Use", "active", want{}}, {"Use", "expired", stale}, {"Use", "revoked", stale}, {"Use", "unknown", notFound},
		{"Revoke", "active", want{}}, {"Revoke", "expired", expired}, {"Revoke", "revoked", revoked}, {"Revoke", "unknown", notFound},
		{"Info", "active", want{}}, {"Info", "expired", expired}, {"Info", "revoked", revoked}, {"Info", "unknown", notFound},
		{"Put", "active", want{}}, {"Put", "expired", expired}, {"Put", "revoked", revoked}, {"Put", "unknown", notFound},
		{"KeepAlive", "active", want{}}, {"KeepAlive", "expired", expired}, {"KeepAlive", "revoked", revoked}, {"KeepAlive", "unknown", notFound},
	}
	for _, tc := range table {
		t.Run(tc.op+"/"+tc.state, func(t *testing.T) {
			s, clk := newService(t)
			id := states[tc.state](t, s, clk)
			rev := s.Revision()
			err := ops[tc.op](s, id)
			if tc.want.code == "" {
				require.NoError(t, err)
				return
			}
			requireCode(t, err, tc.want.code, tc.want.sentinel)
			var le *lease.Error
			require.ErrorAs(t, err, &le)
			require.Equal(t, id, le.LeaseID)
			require.Equal(t, rev, s.Revision(), "a refused operation changes nothing")
			_, _, found := mustGet(t, s, "k")
			require.False(t, found, "a refused Put stores nothing")
		})
	}
}

// TestHolderThroughKeepAlive checks that a lease reports its holder while a
// keep-alive record holds it for the entry, and after the record is gone:
// in Info, in the decisions of the timer's renewals and in the expiry.
func TestHolderThroughKeepAlive(t *testing.T) {
	s, clk := newService(t)
	l, err := s.Grant(ctx, string([]byte("worker-9")), lease.Operation, 3*time.Second)
	require.NoError(t, err)
	parent, stop := context.WithCancel(ctx)
	defer stop()
	_, err = s.KeepAlive(parent, l.ID)
	require.NoError(t, err)
	clk.Advance(time.Minute)
	info, err := s.Info(ctx, l.ID)
	require.NoError(t, err)
	require.Equal(t, "worker-9", info.Holder)
	stop()
	for range 10 {
		clk.Advance(time.Second) // renewals stop; the lease expires
	}
	_, err = s.Info(ctx, l.ID)
	require.ErrorIs(t, err, lease.ErrExpired)
	audit := s.Audit()
	require.NotEmpty(t, audit)
	for _, d := range audit {
		require.Equal(t, "worker-9", d.Holder, "%s at %v", d.Action, d.Timestamp)
	}
	require.Equal(t, lease.ActionExpire, audit[len(audit)-1].Action)
}
