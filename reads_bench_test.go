package lease_test

import (
	"testing"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// The reads' cost: a context check and an error beside the answer.
//
//	go test -run '^$' -bench 'Benchmark(Info|Get)$' -benchmem -count 5

func BenchmarkInfo(b *testing.B) {
	s := lease.Must(lease.New(lease.WithClock(leasetest.NewFakeClock(t0))))
	defer s.Close()
	l, err := s.Grant(ctx, "h", lease.Operation, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Info(ctx, l.ID); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	s := lease.Must(lease.New(lease.WithClock(leasetest.NewFakeClock(t0))))
	defer s.Close()
	if err := s.Put(ctx, "k", []byte("v"), 0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok, err := s.Get(ctx, "k"); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}
