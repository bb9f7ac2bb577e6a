package pgcompare

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

// TestSmoke checks that each library does what the benchmarks assume, on
// the server at hand: a held lock is refused to another client, renewal
// keeps it, and release frees it.
func TestSmoke(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			table := newTable()
			a, b := im.open(t, table, 2), im.open(t, table, 2)
			h, ok, err := a.acquire(ctx, "smoke")
			require.NoError(t, err)
			require.True(t, ok)
			_, ok, err = b.acquire(ctx, "smoke")
			require.NoError(t, err)
			require.False(t, ok, "a held lock went to another client")
			require.NoError(t, a.renew(ctx, []any{h}))
			require.NoError(t, a.release(ctx, h))
			h, ok, err = b.acquire(ctx, "smoke")
			require.NoError(t, err)
			require.True(t, ok, "release did not free the lock")
			require.NoError(t, b.release(ctx, h))
		})
	}
}

// cycle acquires and releases name once.
func cycle(b *testing.B, c client, name string) {
	h, ok, err := c.acquire(ctx, name)
	if err != nil || !ok {
		b.Fatalf("acquire %s: ok %v, %v", name, ok, err)
	}
	if err := c.release(ctx, h); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAcquireRelease is one uncontended lock cycle by 1 or 8
// concurrent clients, each on its own names; acq+rel/s is their total.
func BenchmarkAcquireRelease(b *testing.B) {
	for _, im := range impls {
		for _, clients := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/clients=%d", im.name, clients), func(b *testing.B) {
				c := im.open(b, newTable(), clients)
				b.ReportAllocs()
				if clients == 1 {
					for b.Loop() {
						cycle(b, c, "bench")
					}
				} else {
					var next atomic.Int64
					b.SetParallelism((clients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
					b.RunParallel(func(pb *testing.PB) {
						name := fmt.Sprint("bench-", next.Add(1))
						for pb.Next() {
							cycle(b, c, name)
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "acq+rel/s")
			})
		}
	}
}

// BenchmarkRenew1000 keeps 1,000 held locks alive: one batched call for
// this module, 1,000 heartbeats for pglock.
func BenchmarkRenew1000(b *testing.B) {
	for _, im := range impls {
		b.Run(im.name, func(b *testing.B) {
			c := im.open(b, newTable(), 1)
			handles := make([]any, 1000)
			for i := range handles {
				h, ok, err := c.acquire(ctx, fmt.Sprint("bench-", i))
				require.NoError(b, err)
				require.True(b, ok)
				handles[i] = h
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := c.renew(ctx, handles); err != nil {
					b.Fatal(err)
				}
			}
			for _, h := range handles {
				require.NoError(b, c.release(ctx, h))
			}
		})
	}
}
