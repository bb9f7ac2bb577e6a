package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// WaitCounts counts the callers of AcquireWait queued for each lock, from
// another provider on the table (another process, as far as the queue can
// tell), and stops counting those that gave up.
func TestWaitCounts(t *testing.T) {
	p := newTestProvider(t)
	other, err := NewLockProvider(newPool(t, "lease-test-other"), WithLockTable(strings.Trim(p.Table(), `"`)))
	require.NoError(t, err)
	held, err := p.Acquire(ctx, "job", "holder", long)
	require.NoError(t, err)
	require.NotNil(t, held)
	_, err = p.Acquire(ctx, "quiet", "holder", long)
	require.NoError(t, err)

	got, err := other.WaitCounts(ctx, []string{"job", "quiet", "free"})
	require.NoError(t, err)
	assert.Empty(t, got)

	const n = 3
	c, cancel := context.WithCancel(waitCtx(t))
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := p.AcquireWait(c, "job", fmt.Sprintf("w%d", i), long)
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
	require.Eventually(t, func() bool {
		got, err := other.WaitCounts(ctx, []string{"job", "quiet"})
		return err == nil && got["job"] == n && len(got) == 1
	}, 10*time.Second, 10*time.Millisecond)

	cancel()
	wg.Wait()
	require.Eventually(t, func() bool {
		got, err := other.WaitCounts(ctx, []string{"job"})
		return err == nil && len(got) == 0
	}, 10*time.Second, 10*time.Millisecond, "waiters that gave up leave the queue")

	got, err = other.WaitCounts(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, got)
	for _, names := range [][]string{{""}, {"a", strings.Repeat("x", MaxNameLen+1)}, {"a\x00"}} {
		_, err := other.WaitCounts(ctx, names)
		assert.ErrorIs(t, err, lease.ErrInvalidArgument, "%q", names)
	}
	//lint:ignore SA1012 a nil ctx is the bad input under test
	_, err = other.WaitCounts(nil, []string{"job"})
	assert.ErrorIs(t, err, lease.ErrInvalidArgument)
}
