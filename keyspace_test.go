package lease

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeySpaceAgainstModel puts, moves, detaches and deletes keys at random
// and deletes whole leases' keys, and checks the key space against a plain
// map after every step: each lease's keys come back sorted, whichever of
// them was its first and whichever left.
func TestKeySpaceAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	ks := newKeySpace()
	model := map[string]ID{} // key -> lease (0 for none)
	keysOf := func(lease ID) []string {
		var out []string
		for k, l := range model {
			if l == lease {
				out = append(out, k)
			}
		}
		slices.Sort(out)
		return out
	}
	const leases = 20
	for step := range 20_000 {
		key := "k" + strconv.Itoa(r.IntN(200))
		lease := ID(r.IntN(leases + 1)) // 0: no lease
		switch op := r.IntN(10); {
		case op < 6:
			prev, had := model[key]
			got := ks.put(key, nil, lease)
			if !had {
				prev = 0
			}
			require.Equal(t, prev, got, "step %d: put %s", step, key)
			model[key] = lease
		case op < 9:
			_, found := ks.delete(key)
			_, had := model[key]
			require.Equal(t, had, found)
			delete(model, key)
		default:
			if lease == 0 {
				continue
			}
			want := keysOf(lease)
			if len(want) == 0 {
				continue // the service never asks for the keys of a lease with none
			}
			got := ks.deleteLease(lease, len(want), true)
			require.Equal(t, want, got, "step %d: keys deleted with lease %d", step, lease)
			for _, k := range want {
				delete(model, k)
			}
		}
		l := ID(1 + r.IntN(leases))
		want := keysOf(l)
		if len(want) == 0 {
			require.Empty(t, ks.keysOf(l, 0))
			continue
		}
		require.Equal(t, want, ks.keysOf(l, len(want)), "step %d: keys of lease %d", step, l)
	}
	require.Equal(t, len(model), ks.kv.Len())
}

// BenchmarkKeyIndexDeleteOrder measures what a keyed burst pays for an
// ordered key space: a million keys shaped like the bench's ("lease/N/0")
// leave in random order, as the leases holding them expire. "random" deletes
// each from the key btree at once, as the service does; "sorted-65536"
// defers deletions and applies them 65,536 at a time in key order, sorting
// included, the most a deferred delete could hope for; "hash" deletes from a
// Go map only, the cost without order. Reported per key.
func BenchmarkKeyIndexDeleteOrder(b *testing.B) {
	const n, batch = 1 << 20, 1 << 16
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "lease/" + strconv.Itoa(i) + "/0"
	}
	order := rand.New(rand.NewPCG(3, 4)).Perm(n)
	perKey := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
	}
	tree := func(b *testing.B) keySpace {
		b.StopTimer()
		defer b.StartTimer()
		ks := newKeySpace()
		for _, k := range keys {
			ks.kv.ReplaceOrInsert(kvItem{key: k})
		}
		return ks
	}
	b.Run("random", func(b *testing.B) {
		for b.Loop() {
			ks := tree(b)
			for _, i := range order {
				ks.kv.Delete(kvItem{key: keys[i]})
			}
		}
		perKey(b)
	})
	b.Run("sorted-65536", func(b *testing.B) {
		pending := make([]string, 0, batch)
		for b.Loop() {
			ks := tree(b)
			for _, i := range order {
				if pending = append(pending, keys[i]); len(pending) == batch {
					slices.Sort(pending)
					for _, k := range pending {
						ks.kv.Delete(kvItem{key: k})
					}
					pending = pending[:0]
				}
			}
		}
		perKey(b)
	})
	b.Run("hash", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			m := make(map[string]ID, n)
			for _, k := range keys {
				m[k] = 1
			}
			b.StartTimer()
			for _, i := range order {
				delete(m, keys[i])
			}
		}
		perKey(b)
	})
}
