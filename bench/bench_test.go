package bench

import (
	"errors"
	"flag"
	"testing"
)

// The scenarios as testing.B benchmarks. They use the Quick sizes unless
// -full is given; `go run ./cmd/compare` is the way to get the report.
var full = flag.Bool("full", false, "benchmark at full size (1,000,000 leases)")

func benchConfig() Config {
	if *full {
		return Full()
	}
	return Quick()
}

// eachPeer runs f as a sub-benchmark per peer, skipping peers without the
// capability ok checks.
func eachPeer(b *testing.B, ok func(Leaser) bool, f func(b *testing.B, p Peer, l Leaser)) {
	for _, p := range Peers() {
		b.Run(p.Name, func(b *testing.B) {
			l, err := p.New()
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			if !ok(l) {
				b.Skip("n/a for this peer")
			}
			f(b, p, l)
		})
	}
}

func always(Leaser) bool { return true }

func keyed(l Leaser) bool { _, ok := l.(Keyed); return ok }

func BenchmarkGrantRevoke(b *testing.B) {
	eachPeer(b, always, func(b *testing.B, _ Peer, l Leaser) { BenchGrantRevoke(b, l) })
}

func BenchmarkRenew(b *testing.B) {
	eachPeer(b, always, func(b *testing.B, p Peer, l Leaser) {
		ids, err := GrantMany(l, benchConfig().Size(RenewLive, p), opTTL, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		BenchRenew(b, l, ids)
	})
}

func BenchmarkRenewRandom(b *testing.B) {
	eachPeer(b, always, func(b *testing.B, p Peer, l Leaser) {
		ids, err := GrantMany(l, benchConfig().Size(RenewRandom, p), opTTL, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		BenchRenewRandom(b, l, ids)
	})
}

func BenchmarkSerialMixed(b *testing.B) {
	eachPeer(b, always, func(b *testing.B, _ Peer, l Leaser) { BenchSerialMixed(b, l) })
}

func BenchmarkMemoryChurn(b *testing.B) {
	eachPeer(b, always, func(b *testing.B, p Peer, _ Leaser) {
		oneShot(b, func() (Sample, error) { return RunMemoryChurn(p, benchConfig().Size(MemoryChurn, p)) })
	})
}

func BenchmarkAttachRevoke(b *testing.B) {
	eachPeer(b, keyed, func(b *testing.B, _ Peer, l Leaser) { BenchAttachRevoke(b, l.(KeyedLeaser)) })
}

func BenchmarkParallelMixed(b *testing.B) {
	eachPeer(b, Concurrent, func(b *testing.B, _ Peer, l Leaser) { BenchParallelMixed(b, l) })
}

// oneShot runs a whole-scenario measurement per iteration and reports the
// mean of each of its metrics.
func oneShot(b *testing.B, run func() (Sample, error)) {
	sum := Sample{}
	n := 0
	for b.Loop() {
		s, err := run()
		if errors.Is(err, ErrNotSupported) {
			b.Skip("n/a for this peer")
		}
		if err != nil {
			b.Fatal(err)
		}
		for k, v := range s {
			sum[k] += v
		}
		n++
	}
	for k, v := range sum {
		b.ReportMetric(v/float64(n), k)
	}
}

func BenchmarkExpireBurst(b *testing.B) {
	eachPeer(b, always, func(b *testing.B, p Peer, _ Leaser) {
		oneShot(b, func() (Sample, error) { return RunExpireBurst(p, benchConfig().Size(ExpireBurst, p), 0) })
	})
}

func BenchmarkExpireBurstKeyed(b *testing.B) {
	eachPeer(b, keyed, func(b *testing.B, p Peer, _ Leaser) {
		oneShot(b, func() (Sample, error) { return RunExpireBurst(p, benchConfig().Size(ExpireBurstKeyed, p), 1) })
	})
}

func BenchmarkExpiryLag(b *testing.B) {
	cfg := benchConfig()
	eachPeer(b, always, func(b *testing.B, p Peer, _ Leaser) {
		oneShot(b, func() (Sample, error) {
			return RunExpiryLag(p, cfg.Size(ExpiryLag, p), cfg.LagTTL, cfg.LagSpread, cfg.Load())
		})
	})
}

func BenchmarkMemory(b *testing.B) {
	for _, tc := range []struct {
		name string
		s    Scenario
		keys int
	}{{"keys=0", Memory, 0}, {"keys=2", MemoryKeyed, 2}} {
		b.Run(tc.name, func(b *testing.B) {
			eachPeer(b, always, func(b *testing.B, p Peer, _ Leaser) {
				oneShot(b, func() (Sample, error) {
					s, l, _, err := RunMemory(p, benchConfig().Size(tc.s, p), tc.keys)
					if l != nil {
						l.Close()
					}
					return s, err
				})
			})
		})
	}
}
