package lease_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// TestEveryErrorIsALeaseError walks the package's API with bad input, ended
// leases and a closed service, and checks every error is a *lease.Error
// with a code, whose text starts with "lease: " and ends with its code.
func TestEveryErrorIsALeaseError(t *testing.T) {
	s, clk := newService(t)
	expired := grant(t, s, lease.Operation, time.Second)
	revoked := grant(t, s, lease.Operation, time.Minute)
	_, err := s.Revoke(ctx, revoked.ID)
	require.NoError(t, err)
	keyed, err := s.GrantWithKey(ctx, "h", lease.Operation, time.Minute, "k", nil)
	require.NoError(t, err)
	clk.Advance(time.Second)
	var nilCtx context.Context

	calls := map[string]func() error{
		"Grant empty holder": func() error { _, err := s.Grant(ctx, "", lease.Operation, time.Second); return err },
		"Grant bad purpose":  func() error { _, err := s.Grant(ctx, "h", 0, time.Second); return err },
		"Grant zero ttl":     func() error { _, err := s.Grant(ctx, "h", lease.Operation, 0); return err },
		"Grant nil ctx":      func() error { _, err := s.Grant(nilCtx, "h", lease.Operation, time.Second); return err },
		"GrantWithKey empty": func() error { _, err := s.GrantWithKey(ctx, "h", lease.Operation, time.Second, "", nil); return err },
		"GrantWithKey taken": func() error { _, err := s.GrantWithKey(ctx, "h", lease.Operation, time.Second, "k", nil); return err },
		"Renew unknown":      func() error { _, err := s.Renew(ctx, 999); return err },
		"Renew expired":      func() error { _, err := s.Renew(ctx, expired.ID); return err },
		"RenewTTL negative":  func() error { _, err := s.RenewTTL(ctx, keyed.ID, -time.Second); return err },
		"Use expired":        func() error { _, err := s.Use(ctx, expired.ID, lease.Operation); return err },
		"Use revoked":        func() error { _, err := s.Use(ctx, revoked.ID, lease.Operation); return err },
		"Use other purpose":  func() error { _, err := s.Use(ctx, keyed.ID, lease.StateWrite); return err },
		"Revoke revoked":     func() error { _, err := s.Revoke(ctx, revoked.ID); return err },
		"Info expired":       func() error { _, err := s.Info(ctx, expired.ID); return err },
		"KeepAlive revoked":  func() error { _, err := s.KeepAlive(ctx, revoked.ID); return err },
		"Put empty key":      func() error { return s.Put(ctx, "", nil, keyed.ID) },
		"Put expired":        func() error { return s.Put(ctx, "x", nil, expired.ID) },
		"Delete empty key":   func() error { _, err := s.Delete(ctx, ""); return err },
		"NewPurpose bad":     func() error { _, err := lease.NewPurpose("Bad Name"); return err },
		"ParsePurpose bad":   func() error { _, err := lease.ParsePurpose("no_such_purpose_here"); return err },
		"Restore nil":        func() error { _, err := lease.Restore(nil); return err },
		"ReadSnapshot junk":  func() error { _, err := lease.ReadSnapshot(bytes.NewReader([]byte("junk"))); return err },
	}
	closed, _ := newService(t)
	l := grant(t, closed, lease.Operation, time.Minute)
	require.NoError(t, closed.Close())
	calls["Grant closed"] = func() error { _, err := closed.Grant(ctx, "h", lease.Operation, time.Second); return err }
	calls["Renew closed"] = func() error { _, err := closed.Renew(ctx, l.ID); return err }
	calls["Put closed"] = func() error { return closed.Put(ctx, "k", nil, l.ID) }
	calls["Snapshot closed"] = func() error { _, err := closed.Snapshot(); return err }

	for name, call := range calls {
		t.Run(name, func(t *testing.T) { requireVoice(t, call(), "lease") })
	}
}

// requireVoice checks err is a *lease.Error with a code, prefixed by pkg.
func requireVoice(t *testing.T, err error, pkg string) {
	t.Helper()
	require.Error(t, err)
	var le *lease.Error
	require.ErrorAs(t, err, &le, "%T: %v", err, err)
	require.NotEmpty(t, le.Code)
	assert.Equal(t, le.Code, lease.CodeOf(err))
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, pkg+": "), "%q starts with %q", msg, pkg+": ")
	assert.True(t, strings.HasSuffix(msg, " ["+string(le.Code)+"]"), "%q ends with its code", msg)
}

// How a caller tells the errors apart: by class first, then by code.
func ExampleError_matching() {
	svc := lease.Must(lease.New())
	defer svc.Close()
	ctx := context.Background()
	l, _ := svc.Grant(ctx, "worker-1", lease.Operation, time.Minute)
	_, _ = svc.Revoke(ctx, l.ID)

	for _, err := range []error{
		func() error { _, err := svc.Use(ctx, l.ID, lease.Operation); return err }(),
		func() error { _, err := svc.Grant(ctx, "", lease.Operation, time.Minute); return err }(),
		context.Canceled,
	} {
		var le *lease.Error
		switch {
		case errors.Is(err, lease.ErrStaleUse): // not ours any more: stop
			fmt.Println("stop:", lease.CodeOf(err), errors.Is(err, lease.ErrAlreadyRevoked))
		case errors.Is(err, lease.ErrInvalidArgument) && errors.As(err, &le):
			fmt.Println("bad", le.Field)
		case errors.Is(err, lease.ErrClosed): // shutting down
			fmt.Println("closed")
		case lease.CodeOf(err) == "": // a context or backend error: retry later
			fmt.Println("retry:", err)
		}
	}
	// Output:
	// stop: LS_STALE_USE true
	// bad holder
	// retry: context canceled
}
