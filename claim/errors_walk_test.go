package claim_test

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
	"github.com/leasehold/lease/claim"
)

// TestEveryErrorIsALeaseError walks the package's API with bad input,
// missing items, stale claims and a closed Broker, and checks every error
// is a *lease.Error with a code, whose text starts with "claim: " and ends
// with its code.
func TestEveryErrorIsALeaseError(t *testing.T) {
	b, _, clk := newBroker(t)
	var nilCtx context.Context
	enqueue(t, b, q, "p")
	stale := claimOne(t, b, q, "me")
	clk.Advance(time.Hour) // the claim's lease expires
	noop := func(context.Context, claim.Claim) error { return nil }

	calls := map[string]func() error{
		"Enqueue empty queue":     func() error { _, err := b.Enqueue(ctx, "", nil); return err },
		"Enqueue nil ctx":         func() error { _, err := b.Enqueue(nilCtx, q, nil); return err },
		"Enqueue bad attempts":    func() error { _, err := b.Enqueue(ctx, q, nil, claim.MaxAttempts(0)); return err },
		"Claim zero limit":        func() error { _, err := b.Claim(ctx, q, "me", 0, time.Second); return err },
		"Claim empty owner":       func() error { _, err := b.Claim(ctx, q, "", 1, time.Second); return err },
		"Complete stale":          func() error { return b.Complete(ctx, stale) },
		"Heartbeat stale":         func() error { _, err := b.Heartbeat(ctx, stale, time.Second); return err },
		"Snooze stale":            func() error { return b.Snooze(ctx, stale, time.Second) },
		"Fail stale":              func() error { _, err := b.Fail(ctx, stale, "x", time.Second, time.Second); return err },
		"Lookup missing":          func() error { _, err := b.Lookup(ctx, 42); return err },
		"Cancel missing":          func() error { return b.Cancel(ctx, q, 42) },
		"RequeueDead missing":     func() error { _, err := b.RequeueDead(ctx, q, 42); return err },
		"DeleteDead missing":      func() error { return b.DeleteDead(ctx, q, 42) },
		"List no queue":           func() error { _, err := b.List(ctx, claim.Query{Limit: 1}); return err },
		"Counts empty queue":      func() error { _, err := b.Counts(ctx, ""); return err },
		"Work negative concurr.":  func() error { return b.Work(ctx, claim.Worker{Queue: q, Handler: noop, Concurrency: -1}) },
		"Work no handler":         func() error { return b.Work(ctx, claim.Worker{Queue: q}) },
		"ErrClaimLost":            func() error { return claim.ErrClaimLost },
		"ErrCancelled":            func() error { return claim.ErrCancelled },
		"ErrStopped":              func() error { return claim.ErrStopped },
		"NotFoundError unwrapped": func() error { return (&claim.NotFoundError{Op: "lookup", Item: 1}).Unwrap() },
	}
	closed, _, _ := newBroker(t)
	require.NoError(t, closed.Close())
	calls["Enqueue closed"] = func() error { _, err := closed.Enqueue(ctx, q, nil); return err }
	calls["Claim closed"] = func() error { _, err := closed.Claim(ctx, q, "me", 1, time.Second); return err }
	calls["Work closed"] = func() error { return closed.Work(ctx, claim.Worker{Queue: q, Handler: noop}) }

	for _, name := range slices.Sorted(maps.Keys(calls)) {
		t.Run(name, func(t *testing.T) { requireVoice(t, calls[name](), "claim") })
	}
}

// Item lookups and lease lookups share one not-found: the same sentinel,
// the same code.
func TestNotFoundIsTheLeaseNotFound(t *testing.T) {
	b, _, _ := newBroker(t)
	_, err := b.Lookup(ctx, 42)
	require.ErrorIs(t, err, claim.ErrNotFound)
	require.ErrorIs(t, err, lease.ErrNotFound)
	assert.Equal(t, lease.CodeNotFound, lease.CodeOf(err))
	var nf *claim.NotFoundError
	require.ErrorAs(t, err, &nf)
	assert.Equal(t, claim.ItemID(42), nf.Item)
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
