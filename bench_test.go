package lease_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// The speed goals of docs/design.md. Run with:
//
//	go test -run '^$' -bench . -benchmem -count 5

func BenchmarkUse(b *testing.B) { benchUse(b) }

func BenchmarkGrantRevoke(b *testing.B) { benchGrantRevoke(b) }

// BenchmarkUseObserved is BenchmarkUse with an observer installed: an
// allowed Use is not an event, so it must cost what BenchmarkUse does.
func BenchmarkUseObserved(b *testing.B) {
	benchUse(b, lease.WithObserver(lease.ObserverFunc[lease.Event](func(lease.Event) {})))
}

// BenchmarkGrantRevokeObserved is BenchmarkGrantRevoke with a trivial
// observer: each iteration queues and delivers two events, so the
// difference between the two is what observing costs.
func BenchmarkGrantRevokeObserved(b *testing.B) {
	var seen int
	benchGrantRevoke(b, lease.WithObserver(lease.ObserverFunc[lease.Event](func(lease.Event) { seen++ })))
	if seen != 2*b.N {
		b.Fatalf("observed %d events, want %d", seen, 2*b.N)
	}
}

func benchUse(b *testing.B, opts ...lease.Option) {
	s := lease.Must(lease.New(opts...))
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

func benchGrantRevoke(b *testing.B, opts ...lease.Option) {
	s := lease.Must(lease.New(opts...))
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

// BenchmarkObserverOverhead measures what an observer adds to a grant and
// revoke, and to a Use, on a shared machine: it alternates chunks of
// operations on a service without an observer and one with a trivial
// observer (an ObserverFunc; "-method" for a type with an Observe
// method; "-rare" for an observer of the expiries and denials only, the
// grants and revocations left out), and reports the median chunk of each (plain-ns/op,
// observed-ns/op) and their ratio (overhead-%). Alternating every few
// microseconds puts both under the same load, which separate benchmarks
// run seconds apart do not. Its ns/op counts both services.
func BenchmarkObserverOverhead(b *testing.B) {
	ctx := context.Background()
	grantRevoke := func(s *lease.Service, _ lease.ID) error {
		l, err := s.Grant(ctx, "h", lease.Operation, time.Hour)
		if err == nil {
			_, err = s.Revoke(ctx, l.ID)
		}
		return err
	}
	fn := lease.ObserverFunc[lease.Event](func(lease.Event) {})
	use := func(s *lease.Service, id lease.ID) error {
		_, err := s.Use(ctx, id, lease.Operation)
		return err
	}
	// The rare events only, as an exporter reading Stats selects them.
	rare := lease.ExpireEvents | lease.DenyEvents
	for _, bc := range []struct {
		name string
		obs  lease.Observer[lease.Event]
		set  lease.EventSet
		op   func(s *lease.Service, id lease.ID) error
	}{
		{"grant-revoke", fn, lease.AllEvents, grantRevoke},
		{"grant-revoke-method", discard{}, lease.AllEvents, grantRevoke},
		{"grant-revoke-rare", fn, rare, grantRevoke},
		{"use", fn, lease.AllEvents, use},
		{"use-rare", fn, rare, use},
	} {
		b.Run(bc.name, func(b *testing.B) {
			plain := lease.Must(lease.New())
			defer plain.Close()
			observed := lease.Must(lease.New(lease.WithObserverOf(bc.obs, bc.set)))
			defer observed.Close()
			pl, err := plain.Grant(ctx, "h", lease.Operation, time.Hour)
			require.NoError(b, err)
			ol, err := observed.Grant(ctx, "h", lease.Operation, time.Hour)
			require.NoError(b, err)
			const chunk = 64
			run := func(s *lease.Service, id lease.ID) time.Duration {
				start := time.Now()
				for range chunk {
					if err := bc.op(s, id); err != nil {
						b.Fatal(err)
					}
				}
				return time.Since(start)
			}
			var pt, ot []time.Duration
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%chunk == 0 { // one chunk of each per chunk iterations
					pt = append(pt, run(plain, pl.ID))
					ot = append(ot, run(observed, ol.ID))
				}
			}
			slices.Sort(pt)
			slices.Sort(ot)
			if len(pt) > 0 {
				p, o := float64(pt[len(pt)/2])/chunk, float64(ot[len(ot)/2])/chunk
				b.ReportMetric(p, "plain-ns/op")
				b.ReportMetric(o, "observed-ns/op")
				b.ReportMetric(100*(o-p)/p, "overhead-%")
			}
		})
	}
}

// discard is an Observer that ignores every event.
type discard struct{}

func (discard) Observe(lease.Event) {}

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
	s := lease.Must(lease.New())
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

// BenchmarkKeepAliveRenewals reports what a keep-alive renewal costs, the
// timer renewing 10,000 leases kept alive at each step of a fake clock: its
// ns/op is per renewal.
func BenchmarkKeepAliveRenewals(b *testing.B) {
	const n = 10_000
	clk := leasetest.NewFakeClock(time.Unix(0, 0))
	s := lease.Must(lease.New(lease.WithClock(clk)))
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range n {
		l, err := s.Grant(ctx, "h", lease.Operation, 3*time.Second)
		require.NoError(b, err)
		_, err = s.KeepAlive(ctx, l.ID)
		require.NoError(b, err)
	}
	rev := s.Revision()
	b.ReportAllocs()
	steps := 0
	for b.Loop() {
		clk.Advance(time.Second) // every lease is due: its interval is TTL/3
		steps++
	}
	require.Equal(b, n, s.ActiveCount())
	require.Equal(b, rev+int64(steps*n), s.Revision(), "one renewal per lease per step")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps*n), "ns/renewal")
}

// BenchmarkMemoryPerLease1M reports live heap bytes per lease with a million
// leases and no keys. The service runs on a fake clock: a closed service's
// stopped runtime timer stays in the runtime's timer heap, holding the
// service, until the runtime cleans it up, so on the system clock the
// previous iteration's service could still be counted before (or freed
// during) the next one, and the difference read zero.
func BenchmarkMemoryPerLease1M(b *testing.B) {
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := lease.Must(lease.New(lease.WithClock(leasetest.NewFakeClock(time.Unix(0, 0)))))
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
		s := lease.Must(lease.New(lease.WithClock(clk))) // default audit ring: expiries are audited too
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
	benchBurstDelivered(b, time.Minute, func(s *lease.Service) {
		for range 1_000_000 {
			if _, err := s.Grant(context.Background(), "h", lease.Operation, time.Minute); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchBurstDelivered times advancing the clock by after over a million
// leases that grant made, every one of which must end and be delivered to
// an OnEnd subscriber.
func benchBurstDelivered(b *testing.B, after time.Duration, grant func(s *lease.Service)) {
	for b.Loop() {
		b.StopTimer()
		clk := leasetest.NewFakeClock(time.Unix(0, 0))
		s := lease.Must(lease.New(lease.WithClock(clk)))
		ended := 0
		stop := s.OnEnd(func(lease.Lease, lease.EndReason) { ended++ })
		grant(s)
		runtime.GC()
		b.StartTimer()
		clk.Advance(after)
		if ended != 1_000_000 {
			b.Fatalf("%d endings delivered", ended)
		}
		b.StopTimer()
		stop()
		s.Close()
		b.StartTimer()
	}
}

// BenchmarkExpire1MKeyed is the burst with one key per lease, while another
// goroutine calls Use on a lease that does not expire: it reports the
// latency of those calls (p99 and max, in µs) beside the burst's time.
func BenchmarkExpire1MKeyed(b *testing.B) {
	ctx := context.Background()
	var lat []time.Duration
	for b.Loop() {
		b.StopTimer()
		clk := leasetest.NewFakeClock(time.Unix(0, 0))
		s := lease.Must(lease.New(lease.WithClock(clk)))
		for i := range 1_000_000 {
			l, err := s.Grant(ctx, "h", lease.Operation, time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Put(ctx, "k/"+strconv.Itoa(i), nil, l.ID); err != nil {
				b.Fatal(err)
			}
		}
		stay, err := s.Grant(ctx, "h", lease.Operation, time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		stop := make(chan struct{})
		done := make(chan []time.Duration)
		go func() {
			var got []time.Duration
			for {
				select {
				case <-stop:
					done <- got
					return
				default:
				}
				t := time.Now()
				if _, err := s.Use(ctx, stay.ID, lease.Operation); err != nil {
					panic(err)
				}
				got = append(got, time.Since(t))
			}
		}()
		b.StartTimer()
		clk.Advance(time.Minute)
		if n := s.ActiveCount(); n != 1 {
			b.Fatalf("%d leases left", n)
		}
		b.StopTimer()
		close(stop)
		lat = append(lat, <-done...)
		s.Close()
		b.StartTimer()
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "use-p99-µs")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "use-max-µs")
	}
}

// BenchmarkParallelMixed is a grant, a renew and a revoke of a goroutine's
// own lease per op; run with -cpu 1,2 to compare one goroutine with two.
func BenchmarkParallelMixed(b *testing.B) {
	s := lease.Must(lease.New())
	defer s.Close()
	benchMixed(b, always(func() *lease.Service { return s }), nil)
}

// BenchmarkParallelCeiling bounds what splitting the service into shards
// could give BenchmarkParallelMixed's workload, using whole Services as
// shards. In "own" every goroutine has a Service of its own, so the
// goroutines share nothing: what two cores give this machine at best.
// "shared-counter" is the same plus one atomic counter that every grant,
// renew and revoke bumps, as a service-wide revision that grows by one on
// every change must. "by-pool" picks a grant's Service from a sync.Pool
// of 16, which hands each P the one it put back last: shards kept per
// core, as Go code can keep them. "by-id" sends each lease to the next of
// 16 Services in turn, as shards chosen by lease ID would: a shard is then
// as often last touched by the other core as by this one. Run with -cpu
// 1,2 beside BenchmarkParallelMixed.
func BenchmarkParallelCeiling(b *testing.B) {
	own := func() (func() *lease.Service, func()) {
		s := lease.Must(lease.New())
		return func() *lease.Service { return s }, func() { s.Close() }
	}
	b.Run("own", func(b *testing.B) { benchMixed(b, own, nil) })
	b.Run("shared-counter", func(b *testing.B) {
		var revision atomic.Int64
		benchMixed(b, own, &revision)
	})
	b.Run("by-pool", func(b *testing.B) {
		shards := ceilingServices(b)
		var pool sync.Pool
		for _, s := range shards {
			pool.Put(s)
		}
		pool.New = func() any { return shards[0] }
		benchMixed(b, always(func() *lease.Service {
			s := pool.Get().(*lease.Service)
			pool.Put(s)
			return s
		}), nil)
	})
	b.Run("by-id", func(b *testing.B) {
		shards := ceilingServices(b)
		var id atomic.Uint64
		benchMixed(b, always(func() *lease.Service { return shards[id.Add(1)%uint64(len(shards))] }), nil)
	})
}

// ceilingServices returns the shards of BenchmarkParallelCeiling's
// "by-pool" and "by-id", closed when b ends.
func ceilingServices(b *testing.B) []*lease.Service {
	shards := make([]*lease.Service, 16)
	for i := range shards {
		shards[i] = lease.Must(lease.New())
		b.Cleanup(func() { shards[i].Close() })
	}
	return shards
}

// picker gives a goroutine of benchMixed the function that picks the
// Service of each op, and what to do when the goroutine is done.
type picker func() (pick func() *lease.Service, done func())

// always returns a picker that picks with pick on every goroutine.
func always(pick func() *lease.Service) picker {
	return func() (func() *lease.Service, func()) { return pick, func() {} }
}

// benchMixed runs the parallel benchmarks' op, a grant, a renew and a
// revoke of one lease, on the Service each goroutine's pick returns, and
// bumps revision, if set, once per change.
func benchMixed(b *testing.B, p picker, revision *atomic.Int64) {
	ctx := context.Background()
	bump := func() {
		if revision != nil {
			revision.Add(1)
		}
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		pick, done := p()
		defer done()
		for pb.Next() {
			s := pick()
			l, err := s.Grant(ctx, "h", lease.Operation, time.Hour)
			bump()
			if err == nil {
				_, err = s.Renew(ctx, l.ID)
				bump()
			}
			if err == nil {
				_, err = s.Revoke(ctx, l.ID)
				bump()
			}
			if err != nil {
				panic(err)
			}
		}
	})
}

// BenchmarkMemoryAfterChurn reports live heap bytes per surviving lease
// after granting 2^20 leases and revoking all but one in 256, with the
// fixed-size records small (memOpts) so that the leases are what counts.
func BenchmarkMemoryAfterChurn(b *testing.B) {
	ctx := context.Background()
	const total, every = 1 << 20, 256
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := lease.Must(lease.New(memOpts()...))
		ids := grantMany(b, s, total)
		for i, id := range ids {
			if i%every != 0 {
				if _, err := s.Revoke(ctx, id); err != nil {
					b.Fatal(err)
				}
			}
		}
		ids = nil
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(total/every), "B/lease")
		runtime.KeepAlive(s)
		s.Close()
	}
}

// BenchmarkExpire1MKeyedScattered is the keyed burst as the bench's
// scenario 5k makes it: the deadlines fall within a microsecond of each
// other in no particular order of grant (each lease's TTL is measured from
// its own grant), so leases end in random order, and an OnEnd subscriber
// gets every ending.
func BenchmarkExpire1MKeyedScattered(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	benchBurstDelivered(b, time.Minute+time.Microsecond, func(s *lease.Service) {
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range 1_000_000 {
			l, err := s.Grant(ctx, "h", lease.Operation, time.Minute+time.Duration(rng.IntN(1000)))
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Put(ctx, "lease/"+strconv.Itoa(i)+"/0", nil, l.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}
