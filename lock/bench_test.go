package lock_test

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// BenchmarkMemoryAcquireRelease is an uncontended Acquire and Release, on
// a default service, on one that retains no audit trail, and with a
// lock-delay.
func BenchmarkMemoryAcquireRelease(b *testing.B) {
	for _, c := range []struct {
		name string
		opts []lease.Option
		mem  []lock.MemoryOption
	}{
		{"audit", nil, nil},
		{"noaudit", []lease.Option{lease.WithAuditCapacity(0)}, nil},
		{"delay", nil, []lock.MemoryOption{lock.WithLockDelay(time.Second)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			svc := lease.Must(lease.New(c.opts...))
			defer svc.Close()
			mem := lease.Must(lock.NewMemory(svc, c.mem...))
			b.ReportAllocs()
			for b.Loop() {
				l, err := mem.Acquire(ctx, "job", "a", time.Minute)
				if err != nil || l == nil {
					b.Fatalf("Acquire: %v, %v", l, err)
				}
				if err := mem.Release(ctx, []lock.Lease{*l}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMemoryContention has goroutines on every core race for one lock;
// a winner counts itself in and out of the critical section before
// releasing. violations must be 0: it counts the times two were inside at
// once.
func BenchmarkMemoryContention(b *testing.B) {
	ctx := context.Background()
	svc := lease.Must(lease.New())
	defer svc.Close()
	mem := lease.Must(lock.NewMemory(svc))
	var inside, violations, acquired atomic.Int64
	var ids atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(2) // two goroutines per core
	b.RunParallel(func(pb *testing.PB) {
		exec := "w" + strconv.FormatInt(ids.Add(1), 10)
		for pb.Next() {
			l, err := mem.Acquire(ctx, "job", exec, time.Minute)
			if err != nil {
				b.Error(err)
				return
			}
			if l == nil {
				continue
			}
			acquired.Add(1)
			if inside.Add(1) > 1 {
				violations.Add(1)
			}
			inside.Add(-1)
			if err := mem.Release(ctx, []lock.Lease{*l}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(violations.Load()), "violations")
	b.ReportMetric(float64(acquired.Load())/float64(b.N), "acquired/op")
}

func BenchmarkTryLock(b *testing.B) {
	ctx := context.Background()
	svc := lease.Must(lease.New())
	defer svc.Close()
	m := newManager(b, lease.Must(lock.NewMemory(svc)))
	fn := func(context.Context, lock.Lease) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := m.TryLock(ctx, "job", fn); !ok || err != nil {
			b.Fatalf("TryLock: %t, %v", ok, err)
		}
	}
}

// BenchmarkHandOff measures a hand-off on a Memory: from the holder's
// Release to the moment a waiter blocked in AcquireWait holds the lock, on
// the system clock. It reports the median and the 99th percentile.
func BenchmarkHandOff(b *testing.B) {
	ctx := context.Background()
	svc := lease.Must(lease.New(lease.WithAuditCapacity(0)))
	defer svc.Close()
	mem := lease.Must(lock.NewMemory(svc))
	got := make(chan time.Time)
	released := make(chan struct{})
	turn := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for range turn {
			l, err := mem.AcquireWait(ctx, "x", "waiter", time.Minute)
			if err != nil {
				b.Error(err)
				return
			}
			got <- time.Now()
			_ = mem.Release(ctx, []lock.Lease{*l})
			released <- struct{}{}
		}
	}()
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		l, err := mem.Acquire(ctx, "x", "holder", time.Minute)
		if err != nil || l == nil {
			b.Fatalf("acquire: %v %v", l, err)
		}
		turn <- struct{}{}
		for lock.WaitingCount(mem, "x") == 0 {
			runtime.Gosched()
		}
		start := time.Now()
		if err := mem.Release(ctx, []lock.Lease{*l}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-got).Sub(start))
		<-released
	}
	b.StopTimer()
	close(turn)
	<-exited
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	}
}
