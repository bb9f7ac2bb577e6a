package lock_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// Managers on every core race TryLock on one name, a bounded number of
// times; their functions must never overlap, and every run must be either a
// clean run or contention.
func TestTryLockStress(t *testing.T) {
	svc := lease.New()
	defer svc.Close()
	mem := lock.NewMemory(svc)
	const workers, tries = 8, 300
	var inside, overlaps, ran atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		m := newManager(t, mem)
		wg.Go(func() {
			for range tries {
				_, err := m.TryLock(context.Background(), "hot", func(ctx context.Context, l lock.Lease) error {
					if inside.Add(1) > 1 {
						overlaps.Add(1)
					}
					ran.Add(1)
					inside.Add(-1)
					return nil
				})
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	require.Zero(t, overlaps.Load(), "functions ran under the same lock at once")
	assert.Positive(t, ran.Load())
	l, err := mem.Acquire(context.Background(), "hot", "after", lock.DefaultLeaseDuration)
	require.NoError(t, err)
	assert.NotNil(t, l, "every TryLock released")
}
