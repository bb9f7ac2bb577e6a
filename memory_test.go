package lease_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// heapBytes returns the live heap after a full collection.
func heapBytes() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// memOpts keeps the fixed-size records (audit ring, ended record) small, so
// that what is measured is the cost of the live leases.
func memOpts() []lease.Option {
	return []lease.Option{lease.WithClock(leasetest.NewFakeClock(t0)), lease.WithAuditCapacity(16), lease.WithEndedCapacity(16)}
}

// TestMemoryFollowsLiveLeasesAfterChurn grants 2^18 leases and revokes all
// but one in 256: the heap retained per surviving lease stays within 1.5x of
// a fresh service granted the same number of leases. Before the lease table
// freed thinned-out chunks, each survivor kept a 2 KiB chunk alive (and the
// heap kept its peak array), about 2.5 KB per live lease.
func TestMemoryFollowsLiveLeasesAfterChurn(t *testing.T) {
	const total, every = 1 << 18, 256
	const live = total / every

	base := heapBytes()
	churned := lease.Must(lease.New(memOpts()...))
	defer churned.Close()
	ids := make([]lease.ID, 0, total)
	for range total {
		l, err := churned.Grant(ctx, "holder", lease.Operation, time.Hour)
		require.NoError(t, err)
		ids = append(ids, l.ID)
	}
	for i, id := range ids {
		if i%every != 0 {
			_, err := churned.Revoke(ctx, id)
			require.NoError(t, err)
		}
	}
	ids = nil
	require.Equal(t, live, churned.ActiveCount())
	churnedPer := float64(heapBytes()-base) / live

	base = heapBytes()
	fresh := lease.Must(lease.New(memOpts()...))
	defer fresh.Close()
	for range live {
		_, err := fresh.Grant(ctx, "holder", lease.Operation, time.Hour)
		require.NoError(t, err)
	}
	freshPer := float64(heapBytes()-base) / live
	runtime.KeepAlive(churned)
	runtime.KeepAlive(fresh)

	t.Logf("bytes per live lease: after churn %.0f, fresh %.0f (ratio %.2f)", churnedPer, freshPer, churnedPer/freshPer)
	assert.LessOrEqual(t, churnedPer, 1.5*freshPer)
}
