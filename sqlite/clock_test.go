package sqlite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

// A clock step cannot let two holders act: process A holds a lock when the
// clock that process B reads steps an hour ahead. B finds A's lease over and
// takes the lock with a greater token; A, which has not noticed, is refused
// by the fenced resource, cannot renew, and its release does not free B's
// lock. A step back does the opposite: B finds the lock held.
func TestSteppedClockKeepsFencing(t *testing.T) {
	path := tempFile(t)
	clkA, clkB := leasetest.NewFakeClock(epoch), leasetest.NewFakeClock(epoch)
	a := newProvider(t, path, testOptions(clkA)...)
	b := newProvider(t, path, testOptions(clkB)...)
	var fence lock.Fence

	la, err := a.Acquire(t.Context(), "res", "A", 10*time.Second)
	require.NoError(t, err)
	require.NotNil(t, la)
	require.NoError(t, fence.Check("res", la.Token), "A writes")

	clkB.Rewind(time.Hour)
	lb, err := b.Acquire(t.Context(), "res", "B", 10*time.Second)
	require.NoError(t, err)
	assert.Nil(t, lb, "a step back makes A's lease last longer, never shorter")

	clkB.Advance(2 * time.Hour) // an hour ahead of A
	lb, err = b.Acquire(t.Context(), "res", "B", 10*time.Second)
	require.NoError(t, err)
	require.NotNil(t, lb, "a step ahead ends A's lease early")
	require.Greater(t, lb.Token, la.Token)
	require.NoError(t, fence.Check("res", lb.Token), "B writes")
	require.ErrorIs(t, fence.Check("res", la.Token), lock.ErrStaleToken, "A's late write is refused")

	renewed, err := a.Renew(t.Context(), []lock.Lease{*la}, 10*time.Second)
	require.NoError(t, err)
	assert.Empty(t, renewed, "A cannot renew a lock B took")
	require.NoError(t, a.Release(t.Context(), []lock.Lease{*la}))
	h, held, err := b.Holder(t.Context(), "res")
	require.NoError(t, err)
	require.True(t, held)
	assert.Equal(t, lb.Token, h.Token, "A's release left B's lock alone")
}

// The same for a claim: a store whose clock stepped ahead reclaims an item
// another store holds, with a new token; the first claim is stale.
func TestSteppedClockClaim(t *testing.T) {
	path := tempFile(t)
	clkA, clkB := leasetest.NewFakeClock(epoch), leasetest.NewFakeClock(epoch)
	a := newClaimStore(t, path, testOptions(clkA)...)
	b := newClaimStore(t, path, testOptions(clkB)...)
	_, err := a.Enqueue(t.Context(), []claim.NewItem{{Queue: "q", MaxAttempts: 5}})
	require.NoError(t, err)
	ca, err := a.Claim(t.Context(), claim.ClaimRequest{Queue: "q", Owner: "A", Limit: 1, Lease: 10 * time.Second})
	require.NoError(t, err)
	require.Len(t, ca, 1)
	clkB.Advance(time.Hour)
	cb, err := b.Claim(t.Context(), claim.ClaimRequest{Queue: "q", Owner: "B", Limit: 1, Lease: 10 * time.Second})
	require.NoError(t, err)
	require.Len(t, cb, 1)
	require.Greater(t, cb[0].Ref.Token, ca[0].Ref.Token)
	err = a.Settle(t.Context(), claim.Settlement{Ref: ca[0].Ref, How: claim.SettleComplete})
	require.ErrorIs(t, err, lease.ErrStaleUse, "A's completion is refused")
	_, err = a.Extend(t.Context(), ca[0].Ref, time.Minute)
	require.ErrorIs(t, err, lease.ErrStaleUse, "A's heartbeat is refused")
	require.NoError(t, b.Settle(t.Context(), claim.Settlement{Ref: cb[0].Ref, How: claim.SettleComplete}))
}
