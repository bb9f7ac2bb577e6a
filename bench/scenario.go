package bench

import "time"

// Scenario identifies one measurement of the comparison.
type Scenario int

// The scenarios, numbered; 5 and 7 come with and without keys.
const (
	GrantRevoke      Scenario = iota + 1 // 1. grant + revoke pairs, one goroutine
	RenewLive                            // 2. renew with many live leases
	AttachRevoke                         // 3. grant, attach 4 keys, revoke
	ParallelMixed                        // 4. grant/renew/revoke on every core
	ExpireBurst                          // 5. expire many leases due at one instant
	ExpireBurstKeyed                     // 5k. the same with one key per lease
	ExpiryLag                            // 6. expiry lag on the real clock
	Memory                               // 7. heap bytes per live lease
	MemoryKeyed                          // 7k. the same with two keys per lease
	RenewRandom                          // 2r. renew at random with many live leases
	SerialMixed                          // 4s. scenario 4's op on one goroutine
	MemoryChurn                          // 7c. heap per surviving lease after churn
)

// Metric is one number a scenario produces. Lower is better for all of them.
type Metric struct {
	Name string // key in a Sample
	Unit string
}

// Sample is one run's measurements, by Metric.Name.
type Sample map[string]float64

// Metric names.
const (
	NsPerOp     = "ns/op"
	AllocsPerOp = "allocs/op"
	BytesPerOp  = "B/op"
	TotalMs     = "ms"
	LagP50      = "p50"
	LagP99      = "p99"
	LagMax      = "max"
	BytesLease  = "B/lease"
	CallP99     = "call-p99" // a concurrent call on a live lease during a burst
	CallMax     = "call-max"
)

// Info describes a scenario for reports.
type Info struct {
	Scenario Scenario
	Label    string // short, for the chart: "1 grant+revoke"
	Title    string
	Metrics  []Metric
	// Primary is the metric charted and used for the headline ratio.
	Primary string
}

var opMetrics = []Metric{{NsPerOp, "ns/op"}, {AllocsPerOp, "allocs/op"}, {BytesPerOp, "B/op"}}

// Infos lists every scenario in report order.
func Infos() []Info {
	return []Info{
		{GrantRevoke, "1 grant+revoke", "1. grant + revoke pair, one goroutine", opMetrics, NsPerOp},
		{RenewLive, "2 renew", "2. renew with N live leases", opMetrics, NsPerOp},
		{RenewRandom, "2r renew random", "2r. renew at random with N live leases", opMetrics, NsPerOp},
		{AttachRevoke, "3 attach 4 keys", "3. grant + attach 4 keys + revoke", opMetrics, NsPerOp},
		{ParallelMixed, "4 parallel", "4. parallel grant+renew+revoke, all cores", opMetrics, NsPerOp},
		{SerialMixed, "4s one goroutine", "4s. grant+renew+revoke, one goroutine", opMetrics, NsPerOp},
		{ExpireBurst, "5 expire burst", "5. expire N leases due at one instant", []Metric{{TotalMs, "ms until all gone"}}, TotalMs},
		{ExpireBurstKeyed, "5k burst+keys", "5k. expire N leases with 1 key each due at one instant", []Metric{{TotalMs, "ms until all gone"}, {CallP99, "ms p99 of a concurrent call"}, {CallMax, "ms max of a concurrent call"}}, TotalMs},
		{ExpiryLag, "6 lag p99", "6. expiry lag, real clock, deadlines spread", []Metric{{LagP50, "ms p50"}, {LagP99, "ms p99"}, {LagMax, "ms max"}}, LagP99},
		{Memory, "7 memory", "7. heap per live lease at N leases", []Metric{{BytesLease, "B/lease"}}, BytesLease},
		{MemoryKeyed, "7k memory+keys", "7k. heap per live lease with 2 keys each", []Metric{{BytesLease, "B/lease"}}, BytesLease},
		{MemoryChurn, "7c memory after churn", "7c. heap per surviving lease after N granted, 15 in 16 revoked", []Metric{{BytesLease, "B/lease"}}, BytesLease},
	}
}

// Config sizes the scenarios.
type Config struct {
	Live      int           // live leases for scenarios 2 and 7
	Burst     int           // leases expiring at once in scenario 5
	Lag       int           // leases in scenario 6
	LagSpread time.Duration // deadlines of scenario 6 spread over this
	LagTTL    time.Duration // TTL of scenario 6's leases (etcd's minimum is 2 s)
	// RenewLoad is the renewals a second made during scenario 6, round robin
	// over LoadLeases other leases, by a goroutine of their own.
	RenewLoad  int
	LoadLeases int
	BenchTime  time.Duration // target duration of one testing.Benchmark run
	// SlowExpiry and SlowLag replace Burst and Lag for peers whose expiry
	// is rate-limited (Peer.SlowExpiry).
	SlowExpiry int
	SlowLag    int
	// SlowKeyed replaces Live in scenario 7k for the same peers: etcd puts
	// every key through bbolt, two million of them take minutes a run, and
	// the bytes per lease do not depend on the count.
	SlowKeyed int
}

// Full is the configuration of a full comparison run.
func Full() Config {
	return Config{
		Live: 1_000_000, Burst: 1_000_000, Lag: 100_000,
		LagSpread: 2 * time.Second, LagTTL: 2 * time.Second,
		RenewLoad: 100_000, LoadLeases: 10_000,
		BenchTime:  time.Second,
		SlowExpiry: 10_000, SlowLag: 2_000, SlowKeyed: 200_000,
	}
}

// Quick is a smaller configuration for smoke checks.
func Quick() Config {
	return Config{
		Live: 50_000, Burst: 50_000, Lag: 10_000,
		LagSpread: time.Second, LagTTL: 2 * time.Second,
		RenewLoad: 20_000, LoadLeases: 1_000,
		BenchTime:  100 * time.Millisecond,
		SlowExpiry: 500, SlowLag: 200, SlowKeyed: 20_000,
	}
}

// Tiny is the configuration of the tests: every path, trivial sizes.
func Tiny() Config {
	return Config{
		Live: 200, Burst: 200, Lag: 100,
		LagSpread: 50 * time.Millisecond, LagTTL: 50 * time.Millisecond,
		RenewLoad: 1_000, LoadLeases: 10,
		BenchTime:  time.Millisecond,
		SlowExpiry: 50, SlowLag: 20, SlowKeyed: 100,
	}
}

// Load returns the renewal load of scenario 6.
func (cfg Config) Load() Load { return Load{PerSecond: cfg.RenewLoad, Leases: cfg.LoadLeases} }

// Size returns how many leases scenario s uses for peer p under cfg.
func (cfg Config) Size(s Scenario, p Peer) int {
	switch s {
	case RenewLive, RenewRandom, Memory:
		return cfg.Live
	case MemoryChurn:
		if p.SlowExpiry {
			return min(cfg.Live, cfg.SlowExpiry) // every revoke is a durable write
		}
		return cfg.Live
	case MemoryKeyed:
		if p.SlowExpiry {
			return min(cfg.Live, cfg.SlowKeyed)
		}
		return cfg.Live
	case ExpireBurst, ExpireBurstKeyed:
		if p.SlowExpiry {
			return min(cfg.Burst, cfg.SlowExpiry)
		}
		return cfg.Burst
	case ExpiryLag:
		if p.SlowExpiry {
			return min(cfg.Lag, cfg.SlowLag)
		}
		return cfg.Lag
	}
	return 0
}
