package claim

// The Broker's memory follows what it holds now, not the most it ever held:
// a queue that drained, a burst of claims that ended, tenants whose queues
// were used once. Slices and maps that grew for a peak give their memory
// back once they have shrunk to a quarter of it; the margin between a
// quarter and a half keeps a size that hovers near a boundary from copying
// on every change.

// minShrink is the capacity below which nothing is worth copying.
const minShrink = 64

// shrink returns s, or a copy of it in a smaller array once s fills a
// quarter of its capacity or less. The order of s is kept, so positions
// recorded in its elements stay valid.
func shrink[E any](s []E) []E {
	if cap(s) <= minShrink || len(s) > cap(s)/4 {
		return s
	}
	return moved(s)
}

// moved returns a copy of s in a new array with room for as many again.
func moved[E any](s []E) []E {
	return append(make([]E, 0, max(2*len(s), minShrink/2)), s...)
}

// leanMap is a map that gives back the memory of the entries it no longer
// holds. A Go map keeps its largest size after deletions, so a leanMap
// moves into a new map once it has shrunk to a quarter of the most it held
// since the last move. The zero leanMap is empty and ready to use.
type leanMap[K comparable, V any] struct {
	m    map[K]V
	peak int
}

func (l *leanMap[K, V]) get(k K) V { return l.m[k] }

func (l *leanMap[K, V]) put(k K, v V) {
	if l.m == nil {
		l.m = make(map[K]V)
	}
	l.m[k] = v
	l.peak = max(l.peak, len(l.m))
}

func (l *leanMap[K, V]) delete(k K) {
	delete(l.m, k)
	if l.peak < minShrink || len(l.m) > l.peak/4 {
		return
	}
	m := make(map[K]V, len(l.m))
	for k, v := range l.m {
		m[k] = v
	}
	l.m, l.peak = m, len(m)
}
