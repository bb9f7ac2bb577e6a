package postgres

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/leasehold/lease/lock"
)

// benchProvider is newTestProvider with a pool large enough for clients
// concurrent callers. With async, its sessions do not wait for the WAL to
// reach disk at commit (synchronous_commit off): that isolates the cost of
// the statements from the disk's fsync latency. It is for measuring only;
// see docs/postgres.md for why production must keep the default.
func benchProvider(b *testing.B, clients int, async bool) *LockProvider {
	b.Helper()
	pool := newPool(b, "lease-bench", func(c *pgxpoolConfig) {
		c.MaxConns = int32(max(clients, 4))
		if async {
			c.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
		}
	})
	return providerOn(b, pool, WithLockTable(uniqueTable()))
}

// commitModes are the benchmarks' variants: the default durable commit, and
// commit without waiting for fsync.
var commitModes = []struct {
	name  string
	async bool
}{{"commit=sync", false}, {"commit=async", true}}

// BenchmarkAcquireRelease is one uncontended lock cycle, Acquire then
// Release, by 1 or 8 concurrent clients each on its own names. The
// acq+rel/s metric is the throughput of all clients together.
func BenchmarkAcquireRelease(b *testing.B) {
	for _, mode := range commitModes {
		for _, clients := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/clients=%d", mode.name, clients), func(b *testing.B) {
				benchAcquireRelease(b, benchProvider(b, clients, mode.async), clients)
			})
		}
	}
}

func benchAcquireRelease(b *testing.B, p *LockProvider, clients int) {
	cycle := func(name string) {
		l, err := p.Acquire(ctx, name, "bench", long)
		if err != nil || l == nil {
			b.Fatalf("Acquire(%s) = %v, %v", name, l, err)
		}
		if err := p.Release(ctx, []lock.Lease{*l}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	if clients == 1 {
		for b.Loop() {
			cycle("bench")
		}
	} else {
		var next atomic.Int64
		b.SetParallelism((clients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.RunParallel(func(pb *testing.PB) {
			name := fmt.Sprint("bench-", next.Add(1))
			for pb.Next() {
				cycle(name)
			}
		})
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "acq+rel/s")
}

// BenchmarkSelect1Twice is the floor for BenchmarkAcquireRelease/clients=1:
// two bare round trips on the same pool.
func BenchmarkSelect1Twice(b *testing.B) {
	p := benchProvider(b, 1, false)
	var one int
	b.ReportAllocs()
	for b.Loop() {
		for range 2 {
			if err := p.pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRenew1000 renews 1,000 held leases in one call.
func BenchmarkRenew1000(b *testing.B) {
	for _, mode := range commitModes {
		b.Run(mode.name, func(b *testing.B) { benchRenew1000(b, benchProvider(b, 1, mode.async)) })
	}
}

func benchRenew1000(b *testing.B, p *LockProvider) {
	leases := make([]lock.Lease, 1000)
	for i := range leases {
		leases[i] = mustAcquire(b, p, fmt.Sprint("bench-", i), "bench")
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := p.Renew(ctx, leases, long)
		if err != nil || len(got) != len(leases) {
			b.Fatalf("renewed %d of %d: %v", len(got), len(leases), err)
		}
	}
}
