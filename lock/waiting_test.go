package lock_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// Waiting lists the callers of AcquireWait in the order they will be
// offered the lock, with when each started, and forgets those that leave.
func TestMemoryWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := lease.Must(lease.New())
		defer svc.Close()
		m := lease.Must(lock.NewMemory(svc))
		ctx := t.Context()
		held, err := m.Acquire(ctx, "job", "holder", time.Minute)
		require.NoError(t, err)
		start := time.Now()
		waitCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 2)
		for i, id := range []string{"first", "second"} {
			go func() {
				_, err := m.AcquireWait(waitCtx, "job", id, time.Minute)
				done <- err
			}()
			synctest.Wait()
			if i == 0 {
				<-time.After(time.Second)
			}
		}
		got, err := m.Waiting(ctx, "job", 0)
		require.NoError(t, err)
		assert.Equal(t, []lock.Waiting{{ExecutionID: "first", Since: start}, {ExecutionID: "second", Since: start.Add(time.Second)}}, got)
		got, err = m.Waiting(ctx, "job", 1)
		require.NoError(t, err)
		assert.Len(t, got, 1)
		got, err = m.Waiting(ctx, "other", 0)
		require.NoError(t, err)
		assert.Empty(t, got)

		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		require.ErrorIs(t, <-done, context.Canceled)
		got, err = m.Waiting(ctx, "job", 0)
		require.NoError(t, err)
		assert.Empty(t, got, "those who left are not listed")
		require.NoError(t, m.Release(ctx, []lock.Lease{*held}))

		for _, bad := range []struct {
			name  string
			limit int
			field string
		}{{"", 0, "name"}, {"job", -1, "limit"}} {
			_, err := m.Waiting(ctx, bad.name, bad.limit)
			var le *lease.Error
			require.ErrorAs(t, err, &le)
			assert.Equal(t, bad.field, le.Field)
		}
	})
}
