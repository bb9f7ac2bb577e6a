package claim_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

// duringGrant returns a memory store whose service calls hook while the
// store is granting a claim's lease: the window between taking an item and
// recording its claim, with the store's lock released.
func duringGrant(t *testing.T, hook func(m *claim.Memory)) *claim.Memory {
	t.Helper()
	var m *claim.Memory
	armed := true
	svc := lease.Must(lease.New(lease.WithClock(leasetest.NewFakeClock(t0)), lease.WithAuditObserver(lease.ObserverFunc[lease.Decision](func(d lease.Decision) {
		if d.Action == lease.ActionGrant && d.Allowed && armed {
			armed = false
			hook(m)
		}
	}))))
	m = lease.Must(claim.NewMemory(svc))
	t.Cleanup(func() {
		require.NoError(t, m.Close())
		require.NoError(t, svc.Close())
	})
	return m
}

// An item being claimed counts the attempt at once: whoever looks while
// the lease is granted sees it claimed on its first attempt, not its zeroth.
func TestMemoryAttemptCountsFromTheClaim(t *testing.T) {
	var seen claim.Item
	m := duringGrant(t, func(m *claim.Memory) {
		var err error
		seen, err = m.Lookup(ctx, 1)
		require.NoError(t, err)
	})
	_, err := m.Enqueue(ctx, []claim.NewItem{{Queue: q, Payload: []byte("p"), MaxAttempts: 3}})
	require.NoError(t, err)
	cs, err := m.Claim(ctx, claim.ClaimRequest{Queue: q, Owner: "w", Limit: 1, Lease: ttl})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	assert.Equal(t, claim.Claimed, seen.State)
	assert.Equal(t, 1, seen.Attempts)
	assert.Equal(t, 1, cs[0].Attempt)
	assert.Equal(t, t0, cs[0].EnqueuedAt, "the claim carries its item's EnqueuedAt")
}

// An item cancelled while its claim's lease is granted was claimed first:
// the claim is returned, stale already, and its Lost hears ErrCancelled.
// Dropping it instead would make the claim look as if it found nothing
// while the item was taken from every other claimer.
func TestMemoryCancelDuringClaim(t *testing.T) {
	m := duringGrant(t, func(m *claim.Memory) {
		require.NoError(t, m.Cancel(ctx, q, 1))
	})
	_, err := m.Enqueue(ctx, []claim.NewItem{{Queue: q, Payload: []byte("p"), MaxAttempts: 3}})
	require.NoError(t, err)
	var lost []error
	cs, err := m.Claim(ctx, claim.ClaimRequest{Queue: q, Owner: "w", Limit: 1, Lease: ttl,
		Lost: func(_ claim.Ref, cause error) { lost = append(lost, cause) }})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	assert.Equal(t, claim.ItemID(1), cs[0].Item)
	assert.Equal(t, []byte("p"), cs[0].Payload)
	require.Len(t, lost, 1)
	assert.True(t, errors.Is(lost[0], claim.ErrCancelled), "cause %v", lost[0])
	err = m.Settle(ctx, claim.Settlement{Ref: cs[0].Ref, How: claim.SettleComplete})
	require.ErrorIs(t, err, lease.ErrStaleUse)
	_, err = m.Lookup(ctx, 1)
	require.ErrorIs(t, err, claim.ErrNotFound)
}
