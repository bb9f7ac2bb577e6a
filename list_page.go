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
	if err := checkContext(ctx, "list", 0); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.unlock()
	if _, err := s.begin("list", 0); err != nil {
		return nil, err
	}
	if limit < 1 {
		return nil, nil
	}
	// page holds the lowest IDs above after seen so far, sorted, at most
	// limit of them.
	page := make([]*entry, 0, min(limit, s.heap.Len()))
	s.heap.Each(func(e *entry) bool {
		if e.id <= after || (len(page) == limit && e.id >= page[limit-1].id) {
			return true
		}
		i, _ := slices.BinarySearchFunc(page, e.id, func(x *entry, id ID) int { return cmp.Compare(x.id, id) })
		if len(page) == limit {
			page = page[:limit-1]
		}
		page = slices.Insert(page, i, e)
		return true
	})
	out := make([]Lease, len(page))
	for i, e := range page {
		out[i] = s.snapshot(e)
	}
	return out, nil
}
