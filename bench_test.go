package lease_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// The speed goals of docs/design.md. Run with:
//
//	go test -run '^$' -bench . -benchmem -count 5

func BenchmarkUse(b *testing.B) {
	s := lease.New()
	defer s.Close()
	ctx := context.Background()
	l, _ := s.Grant(ctx, "h", lease.Operation, time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Use(ctx, l.ID, lease.Operation); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGrantRevoke(b *testing.B) {
	s := lease.New()
	defer s.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l, err := s.Grant(ctx, "h", lease.Operation, time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Revoke(ctx, l.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// grantMany grants n leases with TTLs spread over an hour so the heap is
// not trivially ordered.
func grantMany(b *testing.B, s *lease.Service, n int) []lease.ID {
	b.Helper()
	ctx := context.Background()
	ids := make([]lease.ID, n)
	for i := range ids {
		l, err := s.Grant(ctx, "h", lease.Operation, time.Hour+time.Duration(i%3600)*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = l.ID
	}
	return ids
}

// BenchmarkRenew1M renews leases among a million live ones, round-robin (the
// pattern of keep-alive traffic: every lease in turn) and at random.
func BenchmarkRenew1M(b *testing.B) {
	s := lease.New()
	defer s.Close()
	ids := grantMany(b, s, 1_000_000)
	ctx := context.Background()
	for _, bc := range []struct {
		name   string
		stride int
	}{{"round-robin", 1}, {"random", 7919}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := s.Renew(ctx, ids[i]); err != nil {
					b.Fatal(err)
				}
				if i += bc.stride; i >= len(ids) {
					i -= len(ids)
				}
			}
		})
	}
}

// BenchmarkMemoryPerLease1M reports live heap bytes per lease with a million
// leases and no keys.
func BenchmarkMemoryPerLease1M(b *testing.B) {
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := lease.New()
		grantMany(b, s, 1_000_000)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1_000_000, "B/lease")
		runtime.KeepAlive(s)
		s.Close()
	}
}

func BenchmarkExpire1MAtOnce(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		clk := leasetest.NewFakeClock(time.Unix(0, 0))
		s := lease.New(lease.WithClock(clk)) // default audit ring: expiries are audited too
		for range 1_000_000 {
			if _, err := s.Grant(ctx, "h", lease.Operation, time.Minute); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		clk.Advance(time.Minute)
		if n := s.ActiveCount(); n != 0 {
			b.Fatalf("%d leases left", n)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}

// BenchmarkExpire1MWithSubscriber is the burst with an OnEnd subscriber, so
// every expiry is also queued and delivered.
func BenchmarkExpire1MWithSubscriber(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		clk := leasetest.NewFakeClock(time.Unix(0, 0))
		s := lease.New(lease.WithClock(clk))
		ended := 0
		stop := s.OnEnd(func(lease.Lease, lease.EndReason) { ended++ })
		for range 1_000_000 {
			if _, err := s.Grant(ctx, "h", lease.Operation, time.Minute); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		clk.Advance(time.Minute)
		if ended != 1_000_000 {
			b.Fatalf("%d endings delivered", ended)
		}
		b.StopTimer()
		stop()
		s.Close()
		b.StartTimer()
	}
}
