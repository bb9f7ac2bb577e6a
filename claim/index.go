package claim

// itemIndex finds items by ID. IDs are dense and issued in order, so it
// keeps them in fixed pages of consecutive IDs and drops a page once it is
// empty: a plain map would churn, an insert and a delete per item, which
// degrades Go's maps badly at 100,000 items.
type itemIndex struct {
	pages map[ItemID]*indexPage
}

const indexPageSize = 1024

type indexPage struct {
	items [indexPageSize]*item
	n     int
}

func newItemIndex() itemIndex {
	return itemIndex{pages: make(map[ItemID]*indexPage)}
}

func (x *itemIndex) get(id ItemID) *item {
	if p := x.pages[id/indexPageSize]; p != nil {
		return p.items[id%indexPageSize]
	}
	return nil
}

func (x *itemIndex) put(it *item) {
	p := x.pages[it.id/indexPageSize]
	if p == nil {
		p = &indexPage{}
		x.pages[it.id/indexPageSize] = p
	}
	if p.items[it.id%indexPageSize] == nil {
		p.n++
	}
	p.items[it.id%indexPageSize] = it
}

func (x *itemIndex) delete(id ItemID) {
	p := x.pages[id/indexPageSize]
	if p == nil || p.items[id%indexPageSize] == nil {
		return
	}
	p.items[id%indexPageSize] = nil
	if p.n--; p.n == 0 {
		delete(x.pages, id/indexPageSize)
	}
}
