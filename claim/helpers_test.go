package claim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

var (
	ctx = context.Background()
	t0  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

const (
	q   = "jobs"
	ttl = 30 * time.Second
)

// newBroker returns a Broker on a service on a fake clock, both closed when
// the test ends.
func newBroker(t testing.TB, opts ...claim.Option) (*claim.Broker, *lease.Service, *leasetest.FakeClock) {
	t.Helper()
	clk := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(clk)))
	return newBrokerOn(t, svc, opts...), svc, clk
}

// newBrokerOn returns a Broker on svc, both closed when the test ends.
func newBrokerOn(t testing.TB, svc *lease.Service, opts ...claim.Option) *claim.Broker {
	t.Helper()
	b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc)), opts...))
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, svc.Close())
	})
	return b
}

// enqueue enqueues an item that must be accepted.
func enqueue(t testing.TB, b *claim.Broker, queue, payload string, opts ...claim.EnqueueOption) claim.Item {
	t.Helper()
	it, err := b.Enqueue(ctx, queue, []byte(payload), opts...)
	require.NoError(t, err)
	return it
}

// claimOne claims exactly one item of queue.
func claimOne(t testing.TB, b *claim.Broker, queue, owner string) claim.Claim {
	t.Helper()
	cs, err := b.Claim(ctx, queue, owner, 1, ttl)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	return cs[0]
}

// requireCode asserts err is a *lease.Error with code, matching sentinel.
func requireCode(t testing.TB, err error, code lease.Code, sentinel error) *lease.Error {
	t.Helper()
	require.ErrorIs(t, err, sentinel)
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, code, le.Code)
	return le
}

func requireStale(t testing.TB, err error) {
	t.Helper()
	requireCode(t, err, lease.CodeStaleUse, lease.ErrStaleUse)
}

func counts(visible, delayed, claimed, dead int) claim.Counts {
	return claim.Counts{Visible: visible, Delayed: delayed, Claimed: claimed, Dead: dead}
}

// countsOf returns the counts of queue, which must be readable.
func countsOf(t testing.TB, b *claim.Broker, queue string) claim.Counts {
	t.Helper()
	c, err := b.Counts(ctx, queue)
	require.NoError(t, err)
	return c
}

// lookup returns the item id and whether it exists.
func lookup(t testing.TB, b *claim.Broker, id claim.ItemID) (claim.Item, bool) {
	t.Helper()
	it, err := b.Lookup(ctx, id)
	if errors.Is(err, claim.ErrNotFound) {
		return claim.Item{}, false
	}
	require.NoError(t, err)
	return it, true
}

// listDead lists the dead letters of queue, in ID order.
func listDead(t testing.TB, b *claim.Broker, queue string) []claim.Item {
	t.Helper()
	items, err := b.List(ctx, claim.Query{Queue: queue, State: claim.Dead, Limit: 1 << 20})
	require.NoError(t, err)
	return items
}
