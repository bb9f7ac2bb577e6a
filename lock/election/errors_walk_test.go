package election_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock/election"
)

// TestEveryErrorIsALeaseError walks the package's API with bad
// configuration, an empty election and a closed provider, and checks every
// error is a *lease.Error with a code, whose text starts with the package
// that raised it and ends with its code.
func TestEveryErrorIsALeaseError(t *testing.T) {
	m, _ := newFakeMemory(t)
	el, err := election.New(m, "e")
	require.NoError(t, err)
	var nilCtx context.Context
	ld, err := el.Campaign(ctx, []byte("me"))
	require.NoError(t, err)
	require.NoError(t, ld.Resign(ctx))

	calls := map[string]func() error{
		"New zero duration":   func() error { _, err := election.New(m, "e", election.WithLeaseDuration(0)); return err },
		"New negative margin": func() error { _, err := election.New(m, "e", election.WithSafetyMargin(-1)); return err },
		"New zero retry":      func() error { _, err := election.New(m, "e", election.WithRetryInterval(0)); return err },
		"New zero poll":       func() error { _, err := election.New(m, "e", election.WithPollInterval(0)); return err },
		"New margin too big": func() error {
			_, err := election.New(m, "e", election.WithLeaseDuration(time.Second), election.WithSafetyMargin(time.Second))
			return err
		},
		"New empty name":    func() error { _, err := election.New(m, ""); return err },
		"Leader none":       func() error { _, err := el.Leader(ctx); return err },
		"Leader nil ctx":    func() error { _, err := el.Leader(nilCtx); return err },
		"Campaign nil ctx":  func() error { _, err := el.Campaign(nilCtx, nil); return err },
		"Resigned cause":    func() error { return context.Cause(ld.Context()) },
		"ErrNoLeader":       func() error { return election.ErrNoLeader },
		"ErrResigned":       func() error { return election.ErrResigned },
		"ErrLeadershipLost": func() error { return election.ErrLeadershipLost },
	}
	prefix := map[string]string{"ErrLeadershipLost": "lock"}
	for _, name := range slices.Sorted(maps.Keys(calls)) {
		t.Run(name, func(t *testing.T) {
			pkg := prefix[name]
			if pkg == "" {
				pkg = "election"
			}
			requireVoice(t, calls[name](), pkg)
		})
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
