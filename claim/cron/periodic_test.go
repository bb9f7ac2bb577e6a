package cron_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/cron"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

type minute struct{}

func (minute) Kind() string { return "minute" }

func TestPeriodicRunsACronSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		svc := lease.Must(lease.New())
		b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc))))
		defer func() {
			require.NoError(t, b.Close())
			require.NoError(t, svc.Close())
		}()
		s, err := cron.Parse("*/2 * * * *")
		require.NoError(t, err)
		e, err := election.New(lease.Must(lock.NewMemory(svc)), "periodic", election.WithLeaseDuration(10*time.Second))
		require.NoError(t, err)
		p, err := claim.NewPeriodic(b, e, claim.PeriodicJob{Name: "even-minutes", Schedule: s, Queue: "q",
			Args: func(time.Time) claim.Args { return minute{} }})
		require.NoError(t, err)
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- p.Run(runCtx) }()

		start := time.Now() // the bubble starts at midnight UTC
		<-time.After(3 * time.Minute)
		synctest.Wait()
		stop()
		require.NoError(t, <-done)

		items, err := b.List(ctx, claim.Query{Queue: "q", Limit: 10})
		require.NoError(t, err)
		var keys []string
		for _, it := range items {
			keys = append(keys, it.Key)
			assert.Equal(t, "minute", it.Kind)
		}
		assert.Equal(t, []string{
			claim.PeriodicKey("even-minutes", start.Add(2*time.Minute)),
			claim.PeriodicKey("even-minutes", start.Add(4*time.Minute)),
			claim.PeriodicKey("even-minutes", start.Add(6*time.Minute)),
		}, keys, "each tick once, two ahead")
	})
}
