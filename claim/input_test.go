package claim_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

func TestBadInputIsRejectedAndChangesNothing(t *testing.T) {
	b, svc, _ := newBroker(t)
	enqueue(t, b, q, "p")
	c := claimOne(t, b, q, "w")
	enqueue(t, b, q, "p2")
	var nilCtx context.Context

	tests := []struct {
		name  string
		call  func() error
		field string
	}{
		{"enqueue nil ctx", func() error { _, err := b.Enqueue(nilCtx, q, nil); return err }, "ctx"},
		{"enqueue empty queue", func() error { _, err := b.Enqueue(ctx, "", nil); return err }, "queue"},
		{"enqueue negative delay", func() error { _, err := b.Enqueue(ctx, q, nil, claim.Delay(-1)); return err }, "delay"},
		{"enqueue zero max attempts", func() error { _, err := b.Enqueue(ctx, q, nil, claim.MaxAttempts(0)); return err }, "max_attempts"},
		{"enqueue negative max attempts", func() error { _, err := b.Enqueue(ctx, q, nil, claim.MaxAttempts(-3)); return err }, "max_attempts"},
		{"enqueue empty key", func() error { _, err := b.Enqueue(ctx, q, nil, claim.Key("")); return err }, "key"},
		{"claim empty queue", func() error { _, err := b.Claim(ctx, "", "w", 1, ttl); return err }, "queue"},
		{"claim empty owner", func() error { _, err := b.Claim(ctx, q, "", 1, ttl); return err }, "owner"},
		{"claim zero limit", func() error { _, err := b.Claim(ctx, q, "w", 0, ttl); return err }, "limit"},
		{"claim negative limit", func() error { _, err := b.Claim(ctx, q, "w", -1, ttl); return err }, "limit"},
		{"claim zero lease", func() error { _, err := b.Claim(ctx, q, "w", 1, 0); return err }, "lease_duration"},
		{"claim negative lease", func() error { _, err := b.Claim(ctx, q, "w", 1, -time.Second); return err }, "lease_duration"},
		{"heartbeat zero claim", func() error { _, err := b.Heartbeat(ctx, claim.Claim{}, ttl); return err }, "ref"},
		{"heartbeat zero lease", func() error { _, err := b.Heartbeat(ctx, c, 0); return err }, "lease_duration"},
		{"complete zero claim", func() error { return b.Complete(ctx, claim.Claim{}) }, "ref"},
		{"complete nil ctx", func() error { return b.Complete(nilCtx, c) }, "ctx"},
		{"fail zero claim", func() error { _, err := b.Fail(ctx, claim.Claim{}, "x", 1, 1); return err }, "ref"},
		{"fail zero base", func() error { _, err := b.Fail(ctx, c, "x", 0, time.Second); return err }, "base_delay"},
		{"fail zero max", func() error { _, err := b.Fail(ctx, c, "x", time.Second, 0); return err }, "max_delay"},
		{"fail max below base", func() error { _, err := b.Fail(ctx, c, "x", time.Minute, time.Second); return err }, "max_delay"},
		{"requeue empty queue", func() error { _, err := b.RequeueDead(ctx, "", 1); return err }, "queue"},
		{"delete empty queue", func() error { return b.DeleteDead(ctx, "", 1) }, "queue"},
		{"work empty queue", func() error { return b.Work(ctx, claim.Worker{Handler: nopHandler}) }, "queue"},
		{"work nil handler", func() error { return b.Work(ctx, claim.Worker{Queue: q}) }, "handler"},
		{"work negative concurrency", func() error {
			return b.Work(ctx, claim.Worker{Queue: q, Handler: nopHandler, Concurrency: -1})
		}, "concurrency"},
		{"work negative lease", func() error {
			return b.Work(ctx, claim.Worker{Queue: q, Handler: nopHandler, LeaseDuration: -1})
		}, "lease_duration"},
		{"work negative base", func() error {
			return b.Work(ctx, claim.Worker{Queue: q, Handler: nopHandler, BaseDelay: -1})
		}, "base_delay"},
		{"work negative max", func() error {
			return b.Work(ctx, claim.Worker{Queue: q, Handler: nopHandler, MaxDelay: -1})
		}, "max_delay"},
		{"work max below base", func() error {
			return b.Work(ctx, claim.Worker{Queue: q, Handler: nopHandler, BaseDelay: time.Minute, MaxDelay: time.Second})
		}, "max_delay"},
		{"work nil ctx", func() error { return b.Work(nilCtx, claim.Worker{Queue: q, Handler: nopHandler}) }, "ctx"},
		{"work negative batch size", func() error {
			return b.Work(ctx, claim.Worker{Queue: q, Handler: nopHandler, BatchSize: -1})
		}, "batch_size"},
		{"work negative timeout", func() error {
			return b.Work(ctx, claim.Worker{Queue: q, Handler: nopHandler, Timeout: -1})
		}, "timeout"},
		{"work negative stop timeout", func() error {
			return b.Work(ctx, claim.Worker{Queue: q, Handler: nopHandler, StopTimeout: -1})
		}, "stop_timeout"},
		{"enqueue negative priority", func() error { _, err := b.Enqueue(ctx, q, nil, claim.Priority(-1)); return err }, "priority"},
		{"enqueue priority too high", func() error {
			_, err := b.Enqueue(ctx, q, nil, claim.Priority(claim.MaxPriority+1))
			return err
		}, "priority"},
		{"enqueue negative timeout", func() error { _, err := b.Enqueue(ctx, q, nil, claim.Timeout(-1)); return err }, "timeout"},
		{"enqueue timeout above MaxTimeout", func() error {
			_, err := b.Enqueue(ctx, q, nil, claim.Timeout(claim.MaxTimeout+1))
			return err
		}, "timeout"},
		{"enqueue largest timeout", func() error { _, err := b.Enqueue(ctx, q, nil, claim.Timeout(math.MaxInt64)); return err }, "timeout"},
		{"enqueue many timeout above MaxTimeout", func() error {
			_, err := b.EnqueueMany(ctx, []claim.NewItem{{Queue: q}, {Queue: q, Timeout: math.MaxInt64}})
			return err
		}, "items[1].timeout"},
		{"enqueue many empty queue", func() error { _, err := b.EnqueueMany(ctx, []claim.NewItem{{Queue: q}, {}}); return err }, "items[1].queue"},
		{"snooze zero claim", func() error { return b.Snooze(ctx, claim.Claim{}, 0) }, "ref"},
		{"snooze negative", func() error { return b.Snooze(ctx, c, -1) }, "after"},
		{"cancel empty queue", func() error { return b.Cancel(ctx, "", 1) }, "queue"},
		{"cancel nil ctx", func() error { return b.Cancel(nilCtx, q, 1) }, "ctx"},
		{"list empty queue", func() error { _, err := b.List(ctx, claim.Query{Limit: 1}); return err }, "queue"},
		{"lookup nil ctx", func() error { _, err := b.Lookup(nilCtx, 1); return err }, "ctx"},
		{"counts empty queue", func() error { _, err := b.Counts(ctx, ""); return err }, "queue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rev := svc.Revision()
			err := tt.call()
			le := requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
			assert.Equal(t, tt.field, le.Field)
			assert.Contains(t, err.Error(), tt.field)
			assert.Equal(t, counts(1, 0, 1, 0), countsOf(t, b, q))
			assert.Equal(t, rev, svc.Revision(), "the service is untouched")
		})
	}
	require.NoError(t, b.Complete(ctx, c), "the claim survived every bad call")
}

func nopHandler(context.Context, claim.Claim) error { return nil }

func TestBackoff(t *testing.T) {
	const maxDur = time.Duration(math.MaxInt64)
	tests := []struct {
		name      string
		attempt   int
		base, max time.Duration
		want      time.Duration
	}{
		{"first attempt is base", 1, time.Second, time.Hour, time.Second},
		{"doubles", 2, time.Second, time.Hour, 2 * time.Second},
		{"doubles again", 5, time.Second, time.Hour, 16 * time.Second},
		{"capped", 13, time.Second, time.Hour, time.Hour},
		{"exactly max", 3, time.Second, 4 * time.Second, 4 * time.Second},
		{"attempt below 1 counts as 1", 0, time.Second, time.Hour, time.Second},
		{"huge attempt does not overflow", math.MaxInt, time.Second, time.Hour, time.Hour},
		{"shift of 62 within max", 63, 1, maxDur, 1 << 62},
		{"shift of 63 overflows to max", 64, 1, maxDur, maxDur},
		{"big base does not overflow", 3, maxDur / 2, maxDur, maxDur},
		{"max below base", 1, time.Minute, time.Second, time.Second},
		{"zero base", 4, 0, time.Hour, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, claim.Backoff(tt.attempt, tt.base, tt.max))
		})
	}
}
