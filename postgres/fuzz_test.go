package postgres

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/leasehold/lease/lock"
)

// lockModel is the reference the fuzzer checks the provider against: one
// name's state, with time reduced to "expired or not" (the fuzzer expires
// leases by ageing rows).
type lockModel struct {
	held   bool
	holder leaseKey
}

// FuzzProvider runs random sequences of Acquire, Renew, Release and expiry
// on a few names and executions, and checks every result against lockModel:
// contention exactly when held, renew returning exactly the holders in
// input order, release freeing exactly the holders, tokens above every
// token issued before.
func FuzzProvider(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 1, 0xff, 2, 0xff, 0, 0})
	// Take-over by the same execution: the old lease must not renew or
	// release the new one.
	f.Add([]byte{0, 0, 3, 0, 0, 0, 1, 0xff, 2, 0x40, 0, 3, 1, 0xff})
	f.Add([]byte{0, 0, 3, 0, 0, 3, 1, 0xff, 2, 1, 0, 1})
	f.Add([]byte{0, 0, 0, 1, 0, 2, 0, 4, 1, 0x3f, 3, 1, 2, 0x0f, 0, 1, 1, 0xff})
	p := newTestProvider(f)
	var run atomic.Int64
	f.Fuzz(func(t *testing.T, ops []byte) {
		const maxOps = 64
		if len(ops) > 2*maxOps {
			ops = ops[:2*maxOps]
		}
		prefix := fmt.Sprintf("fuzz-%d/", run.Add(1)) // a fresh set of names per input
		names := []string{prefix + "a", prefix + "b", prefix + "c"}
		execs := []string{"x", "y"}
		model := map[string]*lockModel{}
		for _, n := range names {
			model[n] = &lockModel{}
		}
		var (
			issued []lock.Lease // every lease acquired, in order
			top    uint64       // the greatest token issued
		)
		// pick returns the leases among the last 8 issued selected by mask.
		pick := func(mask byte) []lock.Lease {
			var out []lock.Lease
			for i := range 8 {
				if j := len(issued) - 8 + i; j >= 0 && mask&(1<<i) != 0 {
					out = append(out, issued[j])
				}
			}
			return out
		}
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%4, ops[i+1]
			switch op {
			case 0: // acquire
				name, exec := names[int(arg)%3], execs[int(arg/3)%2]
				l, err := p.Acquire(ctx, name, exec, long)
				if err != nil {
					t.Fatalf("op %d: Acquire(%s, %s): %v", i/2, name, exec, err)
				}
				m := model[name]
				if m.held != (l == nil) {
					t.Fatalf("op %d: Acquire(%s, %s) = %v, model held = %v", i/2, name, exec, l, m.held)
				}
				if l == nil {
					continue
				}
				if l.Token <= top {
					t.Fatalf("op %d: token %d not above %d", i/2, l.Token, top)
				}
				top = l.Token
				m.held, m.holder = true, keyOf(*l)
				issued = append(issued, *l)
			case 1: // renew
				in := pick(arg)
				got, err := p.Renew(ctx, in, long)
				if err != nil {
					t.Fatalf("op %d: Renew: %v", i/2, err)
				}
				var want []leaseKey
				for _, l := range in {
					if m := model[l.Name]; m.held && m.holder == keyOf(l) {
						want = append(want, keyOf(l))
					}
				}
				if len(got) != len(want) {
					t.Fatalf("op %d: Renew(%v) renewed %v, want %v", i/2, in, got, want)
				}
				for j := range got {
					if keyOf(got[j]) != want[j] {
						t.Fatalf("op %d: Renew(%v) renewed %v, want %v", i/2, in, got, want)
					}
				}
			case 2: // release
				in := pick(arg)
				if err := p.Release(ctx, in); err != nil {
					t.Fatalf("op %d: Release: %v", i/2, err)
				}
				for _, l := range in {
					if m := model[l.Name]; m.held && m.holder == keyOf(l) {
						m.held = false
					}
				}
			case 3: // expiry
				name := names[int(arg)%3]
				if m := model[name]; m.held {
					if err := ageErr(p, name, 0); err != nil {
						t.Fatalf("op %d: expire %s: %v", i/2, name, err)
					}
					m.held = false
				}
			}
		}
	})
}
