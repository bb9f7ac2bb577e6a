// Package bench measures lease.Service side by side with the peers Go users
// would otherwise pick: etcd's lessor, ttlcache v3 and a bare map plus
// container/heap. Each peer is driven through a thin adapter behind the
// Leaser interface, and every scenario runs the same code against every
// adapter. The compare command (cmd/compare) runs them all and prints a
// table; with -out ../docs it rewrites docs/benchmarks.md. The same
// scenarios are testing.B benchmarks in this package, so
// `go test -bench . -benchmem` works too.
//
// The package lives in its own module so that the peers' dependencies never
// reach users of github.com/leasehold/lease.
package bench
