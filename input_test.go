package lease_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// TestBadInputChangesNothing checks that every kind of bad input gets
// LS_INVALID_ARGUMENT naming the field, and leaves no trace.
func TestBadInputChangesNothing(t *testing.T) {
	var nilCtx context.Context
	tests := []struct {
		name  string
		field string
		call  func(s *lease.Service, id lease.ID) error
	}{
		{"grant empty holder", "holder", func(s *lease.Service, _ lease.ID) error {
			_, err := s.Grant(ctx, "", lease.Operation, time.Second)
			return err
		}},
		{"grant zero purpose", "purpose", func(s *lease.Service, _ lease.ID) error {
			_, err := s.Grant(ctx, "h", 0, time.Second)
			return err
		}},
		{"grant unknown purpose", "purpose", func(s *lease.Service, _ lease.ID) error {
			_, err := s.Grant(ctx, "h", lease.Purpose(math.MaxUint16), time.Second) // never defined, whatever other tests define
			return err
		}},
		{"grant zero ttl", "ttl", func(s *lease.Service, _ lease.ID) error {
			_, err := s.Grant(ctx, "h", lease.Operation, 0)
			return err
		}},
		{"grant negative ttl", "ttl", func(s *lease.Service, _ lease.ID) error {
			_, err := s.Grant(ctx, "h", lease.Operation, -time.Second)
			return err
		}},
		{"grant ttl below bounds", "ttl", func(s *lease.Service, _ lease.ID) error {
			_, err := s.Grant(ctx, "h", lease.Operation, time.Millisecond)
			return err
		}},
		{"grant ttl above bounds", "ttl", func(s *lease.Service, _ lease.ID) error {
			_, err := s.Grant(ctx, "h", lease.Operation, 2*time.Hour)
			return err
		}},
		{"grant nil ctx", "ctx", func(s *lease.Service, _ lease.ID) error {
			_, err := s.Grant(nilCtx, "h", lease.Operation, time.Second)
			return err
		}},
		{"grant with empty key", "key", func(s *lease.Service, _ lease.ID) error {
			_, err := s.GrantWithKey(ctx, "h", lease.Operation, time.Second, "", nil)
			return err
		}},
		{"renew ttl zero", "ttl", func(s *lease.Service, id lease.ID) error {
			_, err := s.RenewTTL(ctx, id, 0)
			return err
		}},
		{"renew ttl above bounds", "ttl", func(s *lease.Service, id lease.ID) error {
			_, err := s.RenewTTL(ctx, id, 2*time.Hour)
			return err
		}},
		{"renew nil ctx", "ctx", func(s *lease.Service, id lease.ID) error {
			_, err := s.Renew(nilCtx, id)
			return err
		}},
		{"use nil ctx", "ctx", func(s *lease.Service, id lease.ID) error {
			_, err := s.Use(nilCtx, id, lease.Operation)
			return err
		}},
		{"revoke nil ctx", "ctx", func(s *lease.Service, id lease.ID) error {
			_, err := s.Revoke(nilCtx, id)
			return err
		}},
		{"keepalive nil ctx", "ctx", func(s *lease.Service, id lease.ID) error {
			_, err := s.KeepAlive(nilCtx, id)
			return err
		}},
		{"put empty key", "key", func(s *lease.Service, id lease.ID) error {
			return s.Put(ctx, "", []byte("v"), id)
		}},
		{"delete empty key", "key", func(s *lease.Service, _ lease.ID) error {
			_, err := s.Delete(ctx, "")
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newService(t, lease.WithTTLBounds(time.Second, time.Hour))
			l := grant(t, s, lease.Operation, time.Minute)
			require.NoError(t, s.Put(ctx, "k", []byte("v"), l.ID))
			rev, audit, list := s.Revision(), s.Audit(), mustList(t, s)

			err := tc.call(s, l.ID)
			requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
			var le *lease.Error
			require.ErrorAs(t, err, &le)
			require.Equal(t, tc.field, le.Field)
			require.Contains(t, err.Error(), tc.field)

			require.Equal(t, rev, s.Revision())
			require.Equal(t, audit, s.Audit(), "bad input is not a decision")
			require.Equal(t, list, mustList(t, s))
		})
	}
}

func TestCancelledContextChangesNothing(t *testing.T) {
	s, _ := newService(t)
	l := grant(t, s, lease.Operation, time.Minute)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	rev := s.Revision()

	_, err := s.Grant(cctx, "h", lease.Operation, time.Second)
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.Renew(cctx, l.ID)
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.Revoke(cctx, l.ID)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, s.Put(cctx, "k", nil, 0), context.Canceled)
	_, err = s.KeepAlive(cctx, l.ID)
	require.ErrorIs(t, err, context.Canceled)

	require.Equal(t, rev, s.Revision())
	require.Equal(t, 1, s.ActiveCount())
}

func TestClosed(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.Operation, time.Minute)
	require.NoError(t, s.Put(ctx, "k", []byte("v"), 0))
	kctx, err := s.KeepAlive(ctx, l.ID)
	require.NoError(t, err)
	audit := s.Audit()
	select {
	case <-s.Done():
		t.Fatal("Done is closed before Close")
	default:
	}

	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")
	select {
	case <-s.Done():
	default:
		t.Fatal("Done is not closed by Close")
	}
	require.ErrorIs(t, context.Cause(kctx), lease.ErrClosed)
	require.Zero(t, clk.Pending(), "Close stops the timer")

	closed := func(err error) { t.Helper(); requireCode(t, err, lease.CodeClosed, lease.ErrClosed) }
	_, err = s.Grant(ctx, "h", lease.Operation, time.Second)
	closed(err)
	_, err = s.GrantWithKey(ctx, "h", lease.Operation, time.Second, "x", nil)
	closed(err)
	_, err = s.Renew(ctx, l.ID)
	closed(err)
	_, err = s.RenewTTL(ctx, l.ID, time.Second)
	closed(err)
	_, err = s.KeepAlive(ctx, l.ID)
	closed(err)
	_, err = s.Use(ctx, l.ID, lease.Operation)
	closed(err)
	_, err = s.Revoke(ctx, l.ID)
	closed(err)
	_, err = s.Info(ctx, l.ID)
	closed(err)
	closed(s.Put(ctx, "k", nil, 0))
	_, err = s.Delete(ctx, "k")
	closed(err)

	_, _, found, err := s.Get(ctx, "k")
	closed(err)
	require.False(t, found)
	list, err := s.List(ctx)
	closed(err)
	require.Nil(t, list)
	kvs, err := s.Scan(ctx, "", 0)
	closed(err)
	require.Nil(t, kvs)
	require.Zero(t, s.ActiveCount())
	require.Equal(t, audit, s.Audit(), "the audit trail stays readable")

	clk.Advance(time.Hour)
	require.Equal(t, audit, s.Audit(), "nothing expires after Close")
}

func TestTTLBoundsAccepted(t *testing.T) {
	s, _ := newService(t, lease.WithTTLBounds(time.Second, time.Hour))
	for _, ttl := range []time.Duration{time.Second, time.Minute, time.Hour} {
		l, err := s.Grant(ctx, "h", lease.Operation, ttl)
		require.NoError(t, err)
		require.Equal(t, ttl, l.TTL)
	}
}

func TestUseWithAnInvalidPurposeIsBadInput(t *testing.T) {
	s, _ := newService(t)
	l := grant(t, s, lease.Operation, time.Minute)
	audit := s.Audit()
	for _, p := range []lease.Purpose{0, 60000} {
		_, err := s.Use(ctx, l.ID, p)
		requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
		var le *lease.Error
		require.ErrorAs(t, err, &le)
		require.Equal(t, "purpose", le.Field)
	}
	require.Equal(t, audit, s.Audit(), "bad input is not a decision")
}

func TestParsePurposeRejectsMangledNames(t *testing.T) {
	for _, s := range []string{"op_er_ation", "-state--write-", "state write", "StateWrite2", ""} {
		_, err := lease.ParsePurpose(s)
		require.ErrorIs(t, err, lease.ErrInvalidArgument, s)
	}
	for s, want := range map[string]lease.Purpose{"STATE-WRITE": lease.StateWrite, "migrationHandoff": lease.MigrationHandoff, "Operation": lease.Operation} {
		got, err := lease.ParsePurpose(s)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
}
