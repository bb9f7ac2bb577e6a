package claim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
)

// TestCoreEndsTheLeaseFirst shortens a claim's lease behind the Broker's
// back, so the Broker's record says live when the service has expired it.
// Every call on the claim must still be refused as stale, take the item
// back and change nothing else.
func TestCoreEndsTheLeaseFirst(t *testing.T) {
	tests := []struct {
		name string
		call func(*claim.Broker, claim.Claim) error
	}{
		{"heartbeat", func(b *claim.Broker, c claim.Claim) error { _, err := b.Heartbeat(ctx, c, ttl); return err }},
		{"complete", func(b *claim.Broker, c claim.Claim) error { return b.Complete(ctx, c) }},
		{"fail", func(b *claim.Broker, c claim.Claim) error {
			_, err := b.Fail(ctx, c, "x", time.Second, time.Second)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := leasetest.NewFakeClock(t0)
			svc := lease.Must(lease.New(lease.WithClock(leasetest.Stalled(clk)))) // timers never fire
			b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
			defer func() {
				require.NoError(t, b.Close())
				require.NoError(t, svc.Close())
			}()
			it := enqueue(t, b, q, "p")
			c := claimOne(t, b, q, "w")
			_, err := svc.RenewTTL(ctx, lease.ID(c.Ref.Token), time.Second)
			require.NoError(t, err)
			clk.Set(t0.Add(2 * time.Second))

			requireStale(t, tt.call(b, c))
			assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q))
			got, _ := lookup(t, b, it.ID)
			require.Len(t, got.History, 1)
			assert.Equal(t, claim.Failure{Attempt: 1, Owner: "w", At: t0.Add(time.Second), Reason: "lease expired", Lost: true}, got.History[0])
			requireStale(t, tt.call(b, c))
			assert.Len(t, claimOne(t, b, q, "w2").Payload, 1)
		})
	}
}

// TestCoreEndingWhileIdleIsSeenAtOnce: the service expires a lease the
// Broker thought live, while no call on the claim is under way; the ending
// notification takes the item back.
func TestCoreEndingWhileIdleIsSeenAtOnce(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(leasetest.Stalled(clk)))) // timers never fire
	b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	defer func() {
		require.NoError(t, b.Close())
		require.NoError(t, svc.Close())
	}()
	enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w")
	_, err := svc.RenewTTL(ctx, lease.ID(c.Ref.Token), time.Second)
	require.NoError(t, err)
	clk.Set(t0.Add(2 * time.Second))
	svc.Revision() // any call settles the service and delivers the ending
	assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q))
	got, _ := lookup(t, b, c.Item)
	assert.Equal(t, t0.Add(time.Second), got.VisibleAt, "visible from the instant the lease expired")
}

// TestExpiredClaimIsSettledWithoutANotification: no timer fires and no
// call reaches the service, so no ending notification arrives; the Broker
// still never shows an expired claim as live.
func TestExpiredClaimIsSettledWithoutANotification(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(leasetest.Stalled(clk)))) // timers never fire
	b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	defer func() {
		require.NoError(t, b.Close())
		require.NoError(t, svc.Close())
	}()
	it := enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w")
	clk.Set(c.ExpiresAt.Add(-1))
	assert.Equal(t, counts(0, 0, 1, 0), countsOf(t, b, q))
	clk.Set(c.ExpiresAt)
	assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q))
	got, _ := lookup(t, b, it.ID)
	assert.Equal(t, c.ExpiresAt, got.VisibleAt)
	c2 := claimOne(t, b, q, "w2")
	assert.Equal(t, 2, c2.Attempt)
	requireStale(t, b.Complete(ctx, c))
	require.NoError(t, b.Complete(ctx, c2))
}

// TestHooksMayCallTheBroker: the service delivers its notifications on the
// goroutine of the call that releases its lock, here the Broker's own calls.
// A hook that calls back into the Broker must not deadlock, because the
// Broker never holds its lock across a call on the service.
func TestHooksMayCallTheBroker(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	var b *claim.Broker
	var seen []claim.Counts
	svc := lease.Must(lease.New(lease.WithClock(clk)))
	svc.OnEnd(func(_ lease.Lease, reason lease.EndReason) {
		if reason == lease.EndExpired {
			seen = append(seen, countsOf(t, b, q))
		}
	})
	b = lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
	defer func() {
		require.NoError(t, b.Close())
		require.NoError(t, svc.Close())
	}()
	_, err := svc.Grant(ctx, "other", lease.StateWrite, time.Second)
	require.NoError(t, err)
	enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w")
	clk.Set(t0.Add(2 * time.Second))
	_, err = b.Heartbeat(ctx, c, ttl) // expires the other lease and delivers
	require.NoError(t, err)
	require.NoError(t, b.Complete(ctx, c))
	assert.Equal(t, []claim.Counts{counts(0, 0, 1, 0)}, seen)
}

// TestOverlappingHeartbeats runs a heartbeat inside another (from the
// service's audit sink, which is called before the outer RenewTTL returns),
// so the service applies the inner one last although it returns first. The
// Broker cannot know that order: it keeps the later expiry, so it never
// takes the item back while the service's lease is live, and when the
// service's expiry is the earlier one its ending notification takes the
// item back then.
func TestOverlappingHeartbeats(t *testing.T) {
	tests := []struct {
		name         string
		outer, inner time.Duration
	}{
		{"service keeps the longer", 5 * time.Second, time.Minute},
		{"service keeps the shorter", time.Minute, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				b      *claim.Broker
				c      claim.Claim
				nested bool
				errIn  error
			)
			clk := leasetest.NewFakeClock(t0)
			svc := lease.Must(lease.New(lease.WithClock(clk), lease.WithAuditObserver(lease.ObserverFunc[lease.Decision](func(d lease.Decision) {
				if d.Action == lease.ActionRenew && !nested {
					nested = true
					_, errIn = b.Heartbeat(ctx, c, tt.inner)
				}
			}))))
			b = lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
			defer func() {
				require.NoError(t, b.Close())
				require.NoError(t, svc.Close())
			}()
			enqueue(t, b, q, "p")
			c = claimOne(t, b, q, "w")

			_, err := b.Heartbeat(ctx, c, tt.outer)
			require.NoError(t, err)
			require.NoError(t, errIn)
			require.True(t, nested)
			l, err := svc.Info(ctx, lease.ID(c.Ref.Token))
			require.NoError(t, err)
			require.Equal(t, t0.Add(tt.inner), l.ExpiresAt, "the service applied the inner heartbeat last")

			clk.Advance(tt.inner - 1)
			assert.Equal(t, counts(0, 0, 1, 0), countsOf(t, b, q), "live while the service's lease is")
			clk.Advance(1)
			assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q), "taken back at the service's expiry")
			requireStale(t, b.Complete(ctx, c))
		})
	}
}
