package lease_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// errSentinels pairs every code with its sentinel.
var errSentinels = []struct {
	code     lease.Code
	sentinel error
}{
	{lease.CodeExpired, lease.ErrExpired},
	{lease.CodeStaleUse, lease.ErrStaleUse},
	{lease.CodeAlreadyRevoked, lease.ErrAlreadyRevoked},
	{lease.CodePurposeMismatch, lease.ErrPurposeMismatch},
	{lease.CodeNotFound, lease.ErrNotFound},
	{lease.CodeInvalidArgument, lease.ErrInvalidArgument},
	{lease.CodeClosed, lease.ErrClosed},
	{lease.CodeKeyExists, lease.ErrKeyExists},
	{lease.CodeStorage, lease.ErrStorage},
}

func TestErrorMatchesExactlyItsSentinel(t *testing.T) {
	for _, tc := range errSentinels {
		t.Run(string(tc.code), func(t *testing.T) {
			err := error(&lease.Error{Code: tc.code, LeaseID: 7})
			endedCode := tc.code == lease.CodeExpired || tc.code == lease.CodeAlreadyRevoked || tc.code == lease.CodeStaleUse
			for _, other := range errSentinels {
				want := other.code == tc.code || (endedCode && other.code == lease.CodeStaleUse)
				assert.Equal(t, want, errors.Is(err, other.sentinel),
					"errors.Is(%s, sentinel of %s)", tc.code, other.code)
			}
			wrapped := fmt.Errorf("doing a thing: %w", err)
			require.ErrorIs(t, wrapped, tc.sentinel)
			require.Equal(t, tc.code, lease.CodeOf(wrapped))
		})
	}
	t.Run("unknown code", func(t *testing.T) {
		err := error(&lease.Error{Code: "LS_BOGUS"})
		for _, other := range errSentinels {
			assert.NotErrorIs(t, err, other.sentinel)
		}
	})
}

// TestEndedLeaseOneRule checks the ended-lease rule on every call that can
// meet an ended lease: whatever the call and its code, the error matches
// ErrStaleUse and the sentinel of how the lease ended, and not the other.
func TestEndedLeaseOneRule(t *testing.T) {
	calls := []struct {
		name string
		call func(s *lease.Service, id lease.ID) error
	}{
		{"Use", func(s *lease.Service, id lease.ID) error { _, err := s.Use(ctx, id, lease.Operation); return err }},
		{"Renew", func(s *lease.Service, id lease.ID) error { _, err := s.Renew(ctx, id); return err }},
		{"RenewTTL", func(s *lease.Service, id lease.ID) error { _, err := s.RenewTTL(ctx, id, time.Minute); return err }},
		{"Revoke", func(s *lease.Service, id lease.ID) error { _, err := s.Revoke(ctx, id); return err }},
		{"Info", func(s *lease.Service, id lease.ID) error { _, err := s.Info(ctx, id); return err }},
		{"Put", func(s *lease.Service, id lease.ID) error { return s.Put(ctx, "k", nil, id) }},
		{"KeepAlive", func(s *lease.Service, id lease.ID) error { _, err := s.KeepAlive(ctx, id); return err }},
	}
	for _, how := range []struct {
		name          string
		end           func(s *lease.Service, clk *leasetest.FakeClock, id lease.ID)
		match, differ error
	}{
		{"expired", func(_ *lease.Service, clk *leasetest.FakeClock, _ lease.ID) { clk.Advance(time.Minute) }, lease.ErrExpired, lease.ErrAlreadyRevoked},
		{"revoked", func(s *lease.Service, _ *leasetest.FakeClock, id lease.ID) {
			_, err := s.Revoke(ctx, id)
			require.NoError(t, err)
		}, lease.ErrAlreadyRevoked, lease.ErrExpired},
	} {
		for _, c := range calls {
			t.Run(how.name+"/"+c.name, func(t *testing.T) {
				s, clk := newService(t)
				l := grant(t, s, lease.Operation, time.Minute)
				how.end(s, clk, l.ID)
				err := c.call(s, l.ID)
				var le *lease.Error
				require.ErrorAs(t, err, &le)
				assert.ErrorIs(t, err, lease.ErrStaleUse)
				assert.ErrorIs(t, err, how.match)
				assert.NotErrorIs(t, err, how.differ)
				assert.NotErrorIs(t, err, lease.ErrNotFound)
			})
		}
	}
}

func TestSentinelsAreDistinct(t *testing.T) {
	for i, a := range errSentinels {
		for _, b := range errSentinels[i+1:] {
			assert.NotErrorIs(t, a.sentinel, b.sentinel)
			assert.NotEqual(t, a.sentinel.Error(), b.sentinel.Error())
		}
	}
}

func TestErrorAsPurposeMismatch(t *testing.T) {
	s, _ := newService(t)
	grant(t, s, lease.Operation, time.Minute) // so the ID under test is not 1
	l := grant(t, s, lease.StateWrite, time.Minute)

	_, err := s.Use(ctx, l.ID, lease.MigrationHandoff)
	requireCode(t, err, lease.CodePurposeMismatch, lease.ErrPurposeMismatch)
	var le *lease.Error
	require.ErrorAs(t, fmt.Errorf("wrapped: %w", err), &le)
	assert.Equal(t, lease.CodePurposeMismatch, le.Code)
	assert.Equal(t, l.ID, le.LeaseID)
	assert.Equal(t, lease.MigrationHandoff, le.Expected, "Expected is the purpose asked for")
	assert.Equal(t, lease.StateWrite, le.Actual, "Actual is the purpose granted")
	assert.Equal(t, "use", le.Op)
	for _, want := range []string{"LS_PURPOSE_MISMATCH", "lease 2", "state_write", "migration_handoff"} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestErrorStrings(t *testing.T) {
	type call func(s *lease.Service, id lease.ID) error
	for _, tc := range []struct {
		name  string
		call  call
		code  lease.Code
		field string // for invalid arguments
	}{
		{"renew expired", func(s *lease.Service, id lease.ID) error { _, err := s.Renew(ctx, id); return err }, lease.CodeExpired, ""},
		{"use expired", func(s *lease.Service, id lease.ID) error { _, err := s.Use(ctx, id, lease.Operation); return err }, lease.CodeStaleUse, ""},
		{"info expired", func(s *lease.Service, id lease.ID) error { _, err := s.Info(ctx, id); return err }, lease.CodeExpired, ""},
		{"put expired", func(s *lease.Service, id lease.ID) error { return s.Put(ctx, "k", nil, id) }, lease.CodeExpired, ""},
		{"renew unknown", func(s *lease.Service, id lease.ID) error { _, err := s.Renew(ctx, id+100); return err }, lease.CodeNotFound, ""},
		{"renew ttl", func(s *lease.Service, id lease.ID) error { _, err := s.RenewTTL(ctx, id, -time.Second); return err }, lease.CodeInvalidArgument, "ttl"},
		{"put key", func(s *lease.Service, id lease.ID) error { return s.Put(ctx, "", nil, id) }, lease.CodeInvalidArgument, "key"},
		{"grant holder", func(s *lease.Service, _ lease.ID) error {
			_, err := s.Grant(ctx, "", lease.Operation, time.Second)
			return err
		}, lease.CodeInvalidArgument, "holder"},
		{"grant purpose", func(s *lease.Service, _ lease.ID) error {
			_, err := s.Grant(ctx, "h", 0, time.Second)
			return err
		}, lease.CodeInvalidArgument, "purpose"},
		{"grant ttl", func(s *lease.Service, _ lease.ID) error {
			_, err := s.Grant(ctx, "h", lease.Operation, 0)
			return err
		}, lease.CodeInvalidArgument, "ttl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newService(t)
			var l lease.Lease
			for range 12 { // a two-digit ID shows the whole number is printed
				l = grant(t, s, lease.Operation, time.Minute)
			}
			if tc.code != lease.CodeInvalidArgument {
				clk.Advance(time.Minute)
			}
			err := tc.call(s, l.ID)
			require.Error(t, err)
			var le *lease.Error
			require.ErrorAs(t, err, &le)
			require.Equal(t, tc.code, le.Code)
			msg := err.Error()
			assert.Contains(t, msg, "["+string(tc.code)+"]")
			if le.LeaseID != 0 {
				assert.Contains(t, msg, "lease "+strconv.FormatUint(uint64(le.LeaseID), 10)+" ")
			}
			if tc.field != "" {
				assert.Equal(t, tc.field, le.Field)
				assert.Contains(t, msg, tc.field)
			}
		})
	}
}

func TestErrorStringAfterClose(t *testing.T) {
	s, _ := newService(t)
	l := grant(t, s, lease.Operation, time.Minute)
	require.NoError(t, s.Close())
	_, err := s.Renew(ctx, l.ID)
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
	assert.Contains(t, err.Error(), "LS_CLOSED")
	assert.Contains(t, err.Error(), "lease 1 ")
}

func TestCodeOf(t *testing.T) {
	leaseErr := &lease.Error{Code: lease.CodeStaleUse, LeaseID: 3}
	for _, tc := range []struct {
		name string
		err  error
		want lease.Code
	}{
		{"nil", nil, ""},
		{"bare", leaseErr, lease.CodeStaleUse},
		{"wrapped", fmt.Errorf("step: %w", leaseErr), lease.CodeStaleUse},
		{"wrapped twice", fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", leaseErr)), lease.CodeStaleUse},
		{"joined", errors.Join(errors.New("other"), leaseErr), lease.CodeStaleUse},
		{"sentinel alone", lease.ErrStaleUse, ""},
		{"plain error", errors.New("boom"), ""},
		{"context", context.Canceled, ""},
		{"formatted not wrapped", fmt.Errorf("step: %v", leaseErr), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, lease.CodeOf(tc.err))
		})
	}
}

func TestLeaseRemaining(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.Operation, 10*time.Second)
	for _, tc := range []struct {
		at   time.Duration // after the grant
		want time.Duration
	}{
		{0, 10 * time.Second},
		{time.Second, 9 * time.Second},
		{10*time.Second - time.Nanosecond, time.Nanosecond},
		{10 * time.Second, 0},
		{10*time.Second + time.Nanosecond, 0},
		{time.Hour, 0},
	} {
		assert.Equal(t, tc.want, l.Remaining(t0.Add(tc.at)), "at +%v", tc.at)
	}
	// Remaining agrees with the service: active while positive.
	clk.Advance(10*time.Second - time.Nanosecond)
	_, err := s.Info(ctx, l.ID)
	require.NoError(t, err)
	clk.Advance(time.Nanosecond)
	require.Zero(t, l.Remaining(clk.Now()))
	_, err = s.Info(ctx, l.ID)
	requireCode(t, err, lease.CodeExpired, lease.ErrExpired)
}
