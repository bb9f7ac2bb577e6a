package bench

import (
	"errors"
	"flag"
	"strconv"
	"sync"
	"testing"
	"time"
)

// opTTL is long enough that no lease of an operation benchmark expires.
const opTTL = time.Hour

// keyNames are the keys scenario 3 attaches; they are reused because every
// iteration revokes its lease, which deletes them.
var keyNames = [4]string{"bench/k0", "bench/k1", "bench/k2", "bench/k3"}

var keyValue = []byte("value-01")

// BenchGrantRevoke is scenario 1: one grant and one revoke per op.
func BenchGrantRevoke(b *testing.B, l Leaser) {
	b.ReportAllocs()
	for b.Loop() {
		id, err := l.Grant(opTTL)
		if err == nil {
			err = l.Revoke(id)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchRenew is scenario 2: renew one of ids per op, round robin.
func BenchRenew(b *testing.B, l Leaser, ids []ID) { benchRenew(b, l, ids, 1) }

// BenchRenewRandom is scenario 2r: renew one of ids per op, stepping by a
// prime, so consecutive renewals land far apart in every peer's memory.
func BenchRenewRandom(b *testing.B, l Leaser, ids []ID) { benchRenew(b, l, ids, randomStride) }

// randomStride is a prime: stepping by it visits every one of a million
// leases (any count it does not divide) before repeating.
const randomStride = 7919

func benchRenew(b *testing.B, l Leaser, ids []ID, stride int) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := l.Renew(ids[i]); err != nil {
			b.Fatal(err)
		}
		if i += stride; i >= len(ids) {
			i %= len(ids)
		}
	}
}

// BenchAttachRevoke is scenario 3: grant, attach 4 keys, revoke per op.
func BenchAttachRevoke(b *testing.B, l KeyedLeaser) {
	b.ReportAllocs()
	for b.Loop() {
		if err := attachRevoke(l); err != nil {
			b.Fatal(err)
		}
	}
}

func attachRevoke(l KeyedLeaser) error {
	id, err := l.Grant(opTTL)
	if err != nil {
		return err
	}
	for _, k := range keyNames {
		if err := l.Attach(id, k, keyValue); err != nil {
			return err
		}
	}
	return l.Revoke(id)
}

// BenchParallelMixed is scenario 4: every goroutine of b.RunParallel
// grants, renews and revokes a lease per op.
func BenchParallelMixed(b *testing.B, l Leaser) {
	b.ReportAllocs()
	var once sync.Once
	var first error
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := mixedOp(l); err != nil {
				once.Do(func() { first = err })
				return
			}
		}
	})
	if first != nil {
		b.Fatal(first)
	}
}

// BenchSerialMixed is scenario 4s: scenario 4's op (grant, renew, revoke)
// on one goroutine, the reference for how much scenario 4 gains from more.
func BenchSerialMixed(b *testing.B, l Leaser) {
	b.ReportAllocs()
	for b.Loop() {
		if err := mixedOp(l); err != nil {
			b.Fatal(err)
		}
	}
}

// mixedOp is the op of scenarios 4 and 4s: grant, renew and revoke.
func mixedOp(l Leaser) error {
	id, err := l.Grant(opTTL)
	if err == nil {
		err = l.Renew(id)
	}
	if err == nil {
		err = l.Revoke(id)
	}
	return err
}

// GrantMany grants n leases of ttl and attaches keys to each (keys must be
// 0 or the peer must be Keyed). Key names are unique per lease.
func GrantMany(l Leaser, n int, ttl time.Duration, keys int) ([]ID, error) {
	ids := make([]ID, n)
	for i := range ids {
		id, err := l.Grant(ttl)
		if err != nil {
			return nil, err
		}
		ids[i] = id
		if err := attachKeys(l, id, i, keys); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

func attachKeys(l Leaser, id ID, i, keys int) error {
	if keys == 0 {
		return nil
	}
	k, ok := l.(Keyed)
	if !ok {
		return errors.New("bench: peer cannot attach keys")
	}
	base := "lease/" + strconv.Itoa(i) + "/"
	for j := range keys {
		if err := k.Attach(id, base+strconv.Itoa(j), keyValue); err != nil {
			return err
		}
	}
	return nil
}

// benchmark runs f with testing.Benchmark for about d and returns its
// sample, or the error f failed with.
func benchmark(d time.Duration, f func(b *testing.B)) (Sample, error) {
	restore := setBenchTime(d)
	defer restore()
	var failed error
	r := testing.Benchmark(func(b *testing.B) {
		defer func() {
			if b.Failed() && failed == nil {
				failed = errors.New("bench: benchmark failed")
			}
		}()
		f(b)
	})
	if failed != nil {
		return nil, failed
	}
	if r.N == 0 {
		return nil, errors.New("bench: benchmark did not run")
	}
	return Sample{
		NsPerOp:     float64(r.T.Nanoseconds()) / float64(r.N),
		AllocsPerOp: float64(r.MemAllocs) / float64(r.N),
		BytesPerOp:  float64(r.MemBytes) / float64(r.N),
	}, nil
}

// setBenchTime sets -test.benchtime, which testing.Benchmark reads, and
// returns a function restoring it. testing.Init registers the flag outside
// of `go test`; it does nothing when the flags already exist.
func setBenchTime(d time.Duration) (restore func()) {
	testing.Init()
	f := flag.Lookup("test.benchtime")
	old := f.Value.String()
	if err := f.Value.Set(d.String()); err != nil {
		panic(err)
	}
	return func() { _ = f.Value.Set(old) }
}
