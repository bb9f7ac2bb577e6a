package lease

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestLeaseTableAgainstMap adds and deletes IDs at random, in bursts that
// leave slabs thin, and checks the table against a map after every step:
// each ID resolves to the entry holding it, the relocation callback is told
// of every entry that moves (so the one reference kept elsewhere stays
// right), and the table frees slabs as they empty.
func TestLeaseTableAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ref := map[ID]*entry{} // where the test believes each entry lives
	tbl := newLeaseTable(func(e *entry) {
		if _, ok := ref[e.id]; !ok {
			t.Fatalf("relocated entry %d, which the table should not hold", e.id)
		}
		ref[e.id] = e
	})
	var next ID
	// check compares without testify in the loop: it runs a million
	// comparisons, and testify's per-call cost dominated the test under
	// -race.
	check := func() {
		require.Equal(t, len(ref), tbl.n)
		for id, e := range ref {
			got := tbl.get(id)
			if got != e || got.id != id || got.ttl != int64(id)*7 {
				require.Same(t, e, got, "entry of %d", id)
				require.Equal(t, id, got.id)
				require.Equal(t, int64(id)*7, got.ttl, "entry of %d lost its contents", id)
			}
		}
	}
	for round := range 25 {
		for range 1 + r.IntN(2000) {
			next++
			e := tbl.add(next)
			e.ttl = int64(next) * 7
			ref[next] = e
		}
		// Delete most of what is held, keeping every keep-th ID.
		keep := 1 + r.IntN(64)
		for id := range ref {
			if int(id)%keep != 0 || round%7 == 6 {
				tbl.delete(id)
				delete(ref, id)
			}
		}
		check()
	}
	require.Nil(t, tbl.get(0))
	require.Nil(t, tbl.get(next+1))
	for id := range ref {
		tbl.delete(id)
	}
	require.Zero(t, tbl.n)
	require.LessOrEqual(t, tbl.nslabs, 1, "only the newest slab stays")
}

// TestLeaseTableEmptyBetweenSlabs adds and deletes one ID at a time, so the
// table is empty every time the IDs move on to a new slab (a service that
// remembers no ended leases): the slab left behind must still be freed.
func TestLeaseTableEmptyBetweenSlabs(t *testing.T) {
	tbl := newLeaseTable(func(*entry) { t.Fatal("nothing to relocate") })
	for id := ID(1); id <= 10*slabSize; id++ {
		tbl.add(id).ttl = 1
		tbl.delete(id)
		require.LessOrEqual(t, tbl.nslabs, 1, "after ID %d", id)
	}
}

// TestLeaseTableSpanFollowsSlabs adds IDs far beyond the slabs held, as a
// restored snapshot or long-lived leases amid heavy churn do: the directory
// never spans more than maxSpan of the slabs held, the slabs left behind
// move out to the sparse map however full they are, and every entry is
// still found where the relocation callback said it went.
func TestLeaseTableSpanFollowsSlabs(t *testing.T) {
	ref := map[ID]*entry{}
	tbl := newLeaseTable(func(e *entry) { ref[e.id] = e })
	add := func(id ID) {
		e := tbl.add(id)
		e.ttl = int64(id)
		ref[id] = e
	}
	for id := ID(1); id < 3*slabSize; id++ {
		add(id) // three full slabs
	}
	add(1 << 40)
	require.Equal(t, 1, tbl.nslabs, "the full slabs far below moved out")
	require.LessOrEqual(t, uint64(len(tbl.dir)), maxSpan(tbl.nslabs))
	// Long-lived leases amid churn: a full slab stays while IDs move on
	// one slab at a time, each slab emptied before the next.
	next := ID(1<<40 + 1)
	for ; next&slabMask != 0; next++ {
		add(next)
	}
	evacuated := false
	for range 100 * int(maxSpan(1)) {
		for range slabSize / 4 {
			add(next)
			tbl.delete(next)
			delete(ref, next)
			next++
		}
		next += slabSize - slabSize/4
		require.LessOrEqual(t, uint64(len(tbl.dir)), maxSpan(tbl.nslabs))
		evacuated = evacuated || tbl.sparse.Len() > 3*slabSize
	}
	require.True(t, evacuated, "the full slab left behind moved out")
	for id, e := range ref {
		got := tbl.get(id)
		require.Same(t, e, got, "entry of %d", id)
		require.Equal(t, int64(id), got.ttl)
	}
	require.Equal(t, len(ref), tbl.n)
}

// TestEntryIsOneCacheLine checks the size the lease table is laid out for:
// a 64-byte entry, so that slabs of them keep each entry on one cache line.
func TestEntryIsOneCacheLine(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) == 8 {
		require.Equal(t, uintptr(64), unsafe.Sizeof(entry{}))
		require.Equal(t, uintptr(16<<10), unsafe.Sizeof(slab{}))
	}
	e := &entry{}
	e.setHolder("holder-1")
	require.Equal(t, "holder-1", e.holder())
	require.Nil(t, e.ka())
}

// TestEntryKeepAliveTakesOverHolder checks that an entry's holder reads the
// same while its keep-alive record holds it, after the entry moved (a copy,
// as the table makes), and once the record is gone.
func TestEntryKeepAliveTakesOverHolder(t *testing.T) {
	e := &entry{}
	e.setHolder(string([]byte("worker-7")))
	ka := &keepAlive{next: 5}
	e.setKA(ka)
	require.Same(t, ka, e.ka())
	require.Equal(t, "worker-7", e.holder())
	moved := new(entry)
	*moved = *e
	require.Same(t, ka, moved.ka())
	require.Equal(t, "worker-7", moved.holder())
	require.Equal(t, int64(5), moved.due())
	moved.setKA(nil)
	require.Nil(t, moved.ka())
	require.Equal(t, "worker-7", moved.holder())
}

// TestLeaseTableDeleteMovesAtMostOneSlab deletes a full table's entries in
// random order, which leaves every slab thin at about the same time, and
// checks that no single delete moves more than one slab's entries, nor a
// run of deletes more than its share: the table's sweep is spread over the
// deletes that follow, not done in one.
func TestLeaseTableDeleteMovesAtMostOneSlab(t *testing.T) {
	moved := 0
	tbl := newLeaseTable(func(*entry) { moved++ })
	const n = 64 * slabSize
	for id := ID(1); id <= n; id++ {
		tbl.add(id)
	}
	ids := make([]ID, n)
	for i := range ids {
		ids[i] = ID(i + 1)
	}
	r := rand.New(rand.NewPCG(3, 4))
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	// A run of deletes as long as a batch of the fire loop moves no more
	// than its share (four entries a delete) and one slab, plus the last few entries of the slabs
	// it nearly drains, which move out at once.
	const run = 64
	most, total, window := 0, 0, 0
	for i, id := range ids {
		if i%run == 0 {
			window = 0
		}
		moved = 0
		tbl.delete(id)
		most = max(most, moved)
		total += moved
		window += moved
		require.LessOrEqual(t, window, run*4+thinSlab+4*lastFew, "entries moved by a run of %d deletes", run)
	}
	require.Positive(t, total, "thin slabs moved out")
	require.LessOrEqual(t, most, thinSlab, "entries moved by one delete")
	require.Zero(t, tbl.n)
}
