package heap

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type rec struct {
	key   int64
	id    uint64
	index int
}

// TestAgainstSortedSlice pushes, pops, removes and re-keys at random and
// checks the heap against a sorted model: pops come out in (Key, Seq)
// order, every record knows its index, and removed records get -1.
func TestAgainstSortedSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	h := New(func(x *rec, i int) { x.index = i })
	live := map[*rec]bool{}
	next := uint64(0)
	for step := range 20_000 {
		switch op := r.IntN(10); {
		case op < 5 || h.Len() == 0:
			next++
			x := &rec{key: r.Int64N(100), id: next}
			h.Push(x.key, x.id, x)
			live[x] = true
		case op < 7:
			e := h.Pop()
			if step%50 == 0 {
				for x := range live { // testify only on a failure: it is slow in a loop
					if x.key < e.Key || (x.key == e.Key && x.id < e.Seq) {
						t.Fatalf("popped %v before %v", e, *x)
					}
				}
			}
			delete(live, e.Val)
			require.Equal(t, -1, e.Val.index)
		case op < 8:
			i := r.IntN(h.Len())
			x := h.At(i).Val
			h.Remove(i)
			delete(live, x)
			require.Equal(t, -1, x.index)
		default:
			i := r.IntN(h.Len())
			x := h.At(i).Val
			x.key = r.Int64N(100)
			h.At(i).Key = x.key
			h.Fix(i)
		}
		if step%1000 == 0 {
			require.Equal(t, len(live), h.Len())
			for x := range live {
				require.Same(t, x, h.At(x.index).Val)
			}
		}
	}
	var keys []int64
	for h.Len() > 0 {
		keys = append(keys, h.Pop().Key)
	}
	require.True(t, slices.IsSorted(keys))
}

// TestArrayIsGivenBack drains a burst: the array shrinks with it.
func TestArrayIsGivenBack(t *testing.T) {
	h := New(func(*rec, int) {})
	for i := range 100_000 {
		h.Push(int64(i), uint64(i), &rec{})
	}
	for h.Len() > 10 {
		h.Pop()
	}
	require.LessOrEqual(t, cap(h.s), minShrink)
}

// TestHoldGivesTheArrayBackOnce drains a burst under Hold: the array stays
// until Release, which gives it back.
func TestHoldGivesTheArrayBackOnce(t *testing.T) {
	h := New(func(*rec, int) {})
	for i := range 100_000 {
		h.Push(int64(i), uint64(i), &rec{})
	}
	peak := cap(h.s)
	h.Hold()
	for h.Len() > 10 {
		h.Pop()
	}
	require.Equal(t, peak, cap(h.s), "held")
	h.Release()
	require.LessOrEqual(t, cap(h.s), minShrink)
	h.Pop()
	require.LessOrEqual(t, cap(h.s), minShrink, "and Remove gives back again")
}
