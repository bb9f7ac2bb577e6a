package claim

import (
	"cmp"
	"slices"
)

// lowestIDs keeps the limit items of lowest ID among those offered to it: a
// page of a listing, chosen in one pass over a queue without gathering and
// sorting the whole queue. It is a max-heap on ID, its root the highest ID
// kept.
type lowestIDs struct {
	limit int
	items []*item
}

// offer keeps it if it is among the limit lowest IDs offered so far.
func (l *lowestIDs) offer(it *item) {
	h := l.items
	if len(h) < l.limit {
		h = append(h, it)
		for i := len(h) - 1; i > 0; { // sift up
			p := (i - 1) / 2
			if h[p].id >= h[i].id {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		l.items = h
		return
	}
	if len(h) == 0 || it.id >= h[0].id {
		return
	}
	h[0] = it
	for i := 0; ; { // sift down
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1].id > h[c].id {
			c++
		}
		if h[i].id >= h[c].id {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// sorted returns the items kept, in ID order.
func (l *lowestIDs) sorted() []*item {
	slices.SortFunc(l.items, func(x, y *item) int { return cmp.Compare(x.id, y.id) })
	return l.items
}
