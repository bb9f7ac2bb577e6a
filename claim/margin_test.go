package claim_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// TestWorkStopsTheHandlerAtTheSafetyMargin: a heartbeat that cannot
// confirm the claim (here its call on the service hangs, in the service's
// audit sink) does not keep the handler running until the lease expires.
// At the safety margin before the last confirmed expiry (a tenth of the
// lease by default) the handler's context is cancelled with a cause that
// matches ErrClaimLost and says why, while the claim is still the worker's:
// nobody else can have the item yet. Once the heartbeat returns the worker
// settles the item as usual.
func TestWorkStopsTheHandlerAtTheSafetyMargin(t *testing.T) {
	tests := []struct {
		name   string
		margin time.Duration // the Worker's; 0 for the default
		want   time.Duration // when the handler is told to stop, from the claim
	}{
		{"default margin", 0, 3*time.Second - 300*time.Millisecond},
		{"margin set", time.Second, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const d = 3 * time.Second
				var (
					hang    = make(chan struct{})
					target  atomic.Uint64 // the lease whose renewals hang
					renewed atomic.Int32
				)
				svc := lease.Must(lease.New(lease.WithAuditObserver(lease.ObserverFunc[lease.Decision](func(dec lease.Decision) {
					if dec.Action == lease.ActionRenew && uint64(dec.LeaseID) == target.Load() {
						renewed.Add(1)
						<-hang
					}
				}))))
				b := newBrokerOn(t, svc)
				type stopped struct {
					at    time.Time
					cause error
				}
				claims := make(chan claim.Claim, 1)
				stops := make(chan stopped, 1)
				stop := startWork(t, b, claim.Worker{Queue: q, LeaseDuration: d, SafetyMargin: tt.margin,
					Handler: func(ctx context.Context, c claim.Claim) error {
						if c.Attempt > 1 {
							return nil
						}
						target.Store(uint64(lease.ID(c.Ref.Token)))
						claims <- c
						<-ctx.Done()
						stops <- stopped{time.Now(), context.Cause(ctx)}
						return errors.New("gave up")
					}})
				start := time.Now()
				it := enqueue(t, b, q, "p")
				c := <-claims

				<-time.After(tt.want - 1)
				synctest.Wait()
				assert.Len(t, stops, 0, "running until the margin")
				assert.Equal(t, int32(1), renewed.Load(), "the first heartbeat hangs")

				got := <-stops
				assert.Equal(t, start.Add(tt.want), got.at, "stopped at the margin before the expiry")
				assert.True(t, got.at.Before(c.ExpiresAt))
				require.ErrorIs(t, got.cause, claim.ErrClaimLost)
				require.ErrorIs(t, got.cause, lease.ErrStaleUse)
				var le *lease.Error
				require.ErrorAs(t, got.cause, &le)
				assert.Equal(t, lease.ID(c.Ref.Token), le.LeaseID)
				assert.Contains(t, got.cause.Error(), "heartbeat could not confirm")
				assert.Equal(t, counts(0, 0, 1, 0), countsOf(t, b, q), "still the worker's claim")

				close(hang) // the heartbeat returns; the worker fails the item
				synctest.Wait()
				assert.Equal(t, int32(1), renewed.Load(), "no heartbeat after the hold was given up")
				got2, ok := lookup(t, b, it.ID)
				require.True(t, ok)
				require.Len(t, got2.History, 1)
				assert.Equal(t, "gave up", got2.History[0].Reason)
				<-time.After(time.Minute)
				synctest.Wait()
				require.NoError(t, stop())
				_, ok = lookup(t, b, it.ID)
				assert.False(t, ok, "completed on its second attempt")
			})
		})
	}
}

// TestWorkValidatesItsHeartbeatSchedule: the Worker's lease and safety
// margin obey the rules of lock.Manager's schedule, and a Worker that
// breaks one is refused with the field at fault and the values.
func TestWorkValidatesItsHeartbeatSchedule(t *testing.T) {
	tests := []struct {
		name   string
		w      claim.Worker
		field  string
		detail string
	}{
		{"negative margin", claim.Worker{SafetyMargin: -1}, "safety_margin", "-1ns is negative"},
		{"margin reaches the first heartbeat", claim.Worker{LeaseDuration: 30 * time.Second, SafetyMargin: 20 * time.Second},
			"safety_margin", "safety margin 20s is not shorter than 20s"},
		{"margin leaves no room for a retry", claim.Worker{LeaseDuration: 30 * time.Second, SafetyMargin: 17 * time.Second},
			"safety_margin", "retry interval 3s is not shorter than 3s"},
		{"lease too short", claim.Worker{LeaseDuration: 2}, "lease_duration", "lease duration 2ns is too short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, svc, _ := newBroker(t)
			enqueue(t, b, q, "p")
			w := tt.w
			w.Queue, w.Handler = q, nopHandler
			err := b.Work(ctx, w)
			le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
			assert.Equal(t, tt.field, le.Field)
			assert.Contains(t, err.Error(), tt.detail)
			assert.Equal(t, counts(1, 0, 0, 0), countsOf(t, b, q), "nothing changed")
			assert.Zero(t, svc.ActiveCount())
		})
	}
}

// TestWorkHeartbeatFindsTheServiceClosed: on the FakeClock, the heartbeat
// that finds the service closed ends the hold at once, without retries,
// and the handler's context carries the service's error.
func TestWorkHeartbeatFindsTheServiceClosed(t *testing.T) {
	b, svc, clk := newBroker(t)
	runs := make(chan handlerRun, 1)
	done := make(chan error, 1)
	go func() {
		done <- b.Work(ctx, claim.Worker{Queue: q, LeaseDuration: ttl, Handler: func(ctx context.Context, c claim.Claim) error {
			runs <- handlerRun{ctx, c}
			<-ctx.Done()
			return context.Cause(ctx)
		}})
	}()
	enqueue(t, b, q, "p")
	run := receive(t, runs)
	require.NoError(t, svc.Close())
	clk.Advance(ttl/3 - 1)
	require.NoError(t, run.ctx.Err(), "nothing before the heartbeat")
	clk.Advance(1)
	require.Error(t, run.ctx.Err(), "the heartbeat found the service closed")
	assert.ErrorIs(t, context.Cause(run.ctx), lease.ErrClosed)
	assert.NotErrorIs(t, context.Cause(run.ctx), claim.ErrClaimLost)
	requireCode(t, receive(t, done), lease.CodeClosed, lease.ErrClosed)
	assert.Zero(t, clk.Pending(), "no heartbeat left")
}
