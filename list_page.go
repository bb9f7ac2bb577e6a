package lease

import (
	"cmp"
	"context"
	"slices"
)

// ListAfter returns a page of the active leases: at most limit of them with
// IDs above after, in ID order. To read the next page, pass the last ID of
// this one. Unlike List it copies only the page, so a tool can show a
// service of millions of leases a page at a time; it still visits every
// active lease to choose the page. A limit below 1 returns no lease. A
// done ctx gets its error, a closed service LS_CLOSED.
func (s *Service) ListAfter(ctx context.Context, after ID, limit int) ([]Lease, error) {
	return s.list(ctx, after, max(limit, 0))
}

// list returns the active leases with IDs above after, in ID order: at
// most limit of them, or all of them for a negative limit.
func (s *Service) list(ctx context.Context, after ID, limit int) ([]Lease, error) {
	if err := checkContext(ctx, "list", 0); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.unlock()
	if _, err := s.begin("list", 0); err != nil {
		return nil, err
	}
	if limit == 0 {
		return nil, nil
	}
	var page []*entry
	byID := func(x *entry, id ID) int { return cmp.Compare(x.id, id) }
	if limit < 0 || limit >= s.heap.Len() {
		// Every lease above after may be in the page: take them all and
		// sort once.
		page = make([]*entry, 0, s.heap.Len())
		s.heap.Each(func(e *entry) bool {
			if e.id > after {
				page = append(page, e)
			}
			return true
		})
		slices.SortFunc(page, func(a, b *entry) int { return byID(a, b.id) })
		if limit >= 0 {
			page = page[:min(limit, len(page))]
		}
	} else {
		// page holds the lowest IDs above after seen so far, sorted, at
		// most limit of them.
		page = make([]*entry, 0, limit)
		s.heap.Each(func(e *entry) bool {
			if e.id <= after || (len(page) == limit && e.id >= page[limit-1].id) {
				return true
			}
			i, _ := slices.BinarySearchFunc(page, e.id, byID)
			if len(page) == limit {
				page = page[:limit-1]
			}
			page = slices.Insert(page, i, e)
			return true
		})
	}
	out := make([]Lease, len(page))
	for i, e := range page {
		out[i] = s.snapshot(e)
	}
	return out, nil
}
