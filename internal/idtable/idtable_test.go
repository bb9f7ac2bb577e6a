package idtable

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestAgainstMap runs random puts of increasing IDs and random deletes on a
// Table and on a map: every lookup agrees, through chunks being thinned out,
// freed and maps being rebuilt.
func TestAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tab Table[int]
	ref := map[uint64]*int{}
	next := uint64(1)
	for step := range 200_000 {
		switch {
		case r.IntN(3) > 0 || len(ref) == 0:
			v := step
			tab.Put(next, &v)
			ref[next] = &v
			next += uint64(1 + r.IntN(3))
		default:
			id := uint64(r.Int64N(int64(next)))
			tab.Delete(id)
			delete(ref, id)
		}
		if step%1000 == 0 {
			for i := range r.IntN(500) {
				id := uint64(i*7+step) % next
				tab.Delete(id)
				delete(ref, id)
			}
		}
		if tab.Len() != len(ref) { // testify only on a mismatch: it is slow in a loop
			require.Equal(t, len(ref), tab.Len(), "step %d", step)
		}
	}
	for id := range next + 300 {
		if got := tab.Get(id); got != ref[id] {
			require.Equal(t, ref[id], got, "id %d", id)
		}
	}
}

// TestThinChunksMoveToTheMap leaves few records in old chunks: the chunks
// are freed and the records are still found, and can be replaced and
// deleted.
func TestThinChunksMoveToTheMap(t *testing.T) {
	var tab Table[int]
	vals := make([]int, 9*chunkSize)
	for i := range vals {
		tab.Put(uint64(i), &vals[i])
	}
	for i := range 8 * chunkSize {
		if i%chunkSize != 5 {
			tab.Delete(uint64(i))
		}
	}
	assert.NotContains(t, tab.chunks, uint64(0), "thinned chunks are freed")
	assert.LessOrEqual(t, len(tab.chunks), 2, "all but those thinned since the last sweep")
	assert.Same(t, &vals[5], tab.Get(5))
	v := -1
	tab.Put(5, &v)
	assert.Same(t, &v, tab.Get(5))
	tab.Put(6, &v) // an old ID put again stays sparse
	assert.NotContains(t, tab.chunks, uint64(0))
	assert.Equal(t, chunkSize+9, tab.Len())
	tab.Delete(5)
	tab.Delete(6)
	assert.Nil(t, tab.Get(5))
	assert.Equal(t, chunkSize+7, tab.Len())
}

// TestMapsAreRebuiltWhenTheyShrink checks a map that once held many entries
// is replaced by a small one once most are gone.
func TestMapsAreRebuiltWhenTheyShrink(t *testing.T) {
	var tab Table[int]
	v := 0
	const n = 1000 * chunkSize
	for i := range uint64(n) {
		tab.Put(i, &v)
	}
	for i := range uint64(n - chunkSize) {
		tab.Delete(i)
	}
	assert.Equal(t, chunkSize, tab.Len())
	assert.Less(t, tab.chunksPeak, minRebuild, "rebuilt when it fell to a quarter of its peak")
}

// TestDrainingInOrderNeverSweeps deletes records oldest first while new
// ones arrive, as a FIFO of ended leases does: chunks stay full on
// average, nothing moves to the map.
func TestDrainingInOrderNeverSweeps(t *testing.T) {
	var tab Table[int]
	v := 0
	const window = 4096
	for id := range uint64(100 * window) {
		tab.Put(id, &v)
		if id >= window {
			tab.Delete(id - window)
		}
	}
	assert.Empty(t, tab.sparse)
	assert.Equal(t, window, tab.Len())
}

// TestCompletedInOrderKeepsOnlyTheNewestChunk puts records and deletes
// each at once but one in 128, as a queue whose items mostly complete at
// once does: the survivors end up in the map, the only chunk is the
// newest, and it is not freed and reallocated as it empties.
func TestCompletedInOrderKeepsOnlyTheNewestChunk(t *testing.T) {
	var tab Table[int]
	v := 0
	for id := range uint64(100 * chunkSize) {
		tab.Put(id, &v)
		if id%128 != 0 {
			tab.Delete(id)
		}
	}
	assert.Len(t, tab.chunks, 1)
	assert.Len(t, tab.sparse, 100*chunkSize/128-2, "all but the newest chunk's survivors")
	assert.Equal(t, 100*chunkSize/128, tab.Len())
	allocs := testing.AllocsPerRun(1000, func() {
		id := uint64(100*chunkSize) + 1
		tab.Put(id, &v)
		tab.Delete(id)
	})
	assert.Zero(t, allocs, "an empty newest chunk is kept for the next put")
	for id := range uint64(100 * chunkSize) {
		if id%128 == 0 {
			assert.Same(t, &v, tab.Get(id))
		}
	}
}

// TestMapAgainstMap sets and deletes IDs at random in a Map and in a plain
// map, and checks that they agree throughout, that every shard holds IDs of
// one range, and that memory follows the entries held: no shard is kept
// whose map once held four times what it holds (so no call ever copies
// more than a quarter of a shard), and empty shards are dropped.
func TestMapAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var m Map[uint64, int]
	ref := map[uint64]int{}
	const span = 20 * shardSize
	for k := range uint64(span) {
		m.Set(k, int(k))
		ref[k] = int(k)
	}
	for step := range 4 * span {
		k := uint64(r.IntN(span + shardSize))
		if step%9 == 0 {
			m.Set(k, step)
			ref[k] = step
		} else {
			m.Delete(k)
			delete(ref, k)
		}
		require.Equal(t, len(ref), m.Len())
		v, ok := m.Get(k)
		want, wantOK := ref[k]
		require.Equal(t, wantOK, ok)
		require.Equal(t, want, v)
	}
	for num, sh := range m.shards {
		require.NotEmpty(t, sh.m, "an empty shard is dropped")
		require.True(t, sh.peak < minShardCopy || len(sh.m)*4 > sh.peak, "shard %d: %d entries, peak %d", num, len(sh.m), sh.peak)
		for k := range sh.m {
			require.Equal(t, num, k/shardSize)
		}
	}
	for k, want := range ref {
		v, ok := m.Get(k)
		require.True(t, ok)
		require.Equal(t, want, v)
	}
}
