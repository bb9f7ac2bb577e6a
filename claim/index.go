package claim

// itemIndex finds items by ID. IDs are dense and issued in order, so it
// keeps them in fixed pages of consecutive IDs, in a slice from the oldest
// page with a live item to the newest, and drops pages from the front as
// they empty. A map would churn, an insert and a delete per item, which
// degrades Go's maps badly at 100,000 items.
type itemIndex struct {
	pages []*indexPage // pages[i] holds the IDs of page number first+i
	first ItemID
}

const indexPageSize = 1024

type indexPage struct {
	items [indexPageSize]*item
	n     int
}

func (x *itemIndex) page(id ItemID) *indexPage {
	n := id / indexPageSize
	if n < x.first || n-x.first >= ItemID(len(x.pages)) {
		return nil
	}
	return x.pages[n-x.first]
}

func (x *itemIndex) get(id ItemID) *item {
	if p := x.page(id); p != nil {
		return p.items[id%indexPageSize]
	}
	return nil
}

// put adds a new item; IDs must be put in increasing order.
func (x *itemIndex) put(it *item) {
	n := it.id / indexPageSize
	if len(x.pages) == 0 {
		x.first = n
	}
	for n-x.first >= ItemID(len(x.pages)) {
		x.pages = append(x.pages, nil)
	}
	p := x.pages[n-x.first]
	if p == nil {
		p = &indexPage{}
		x.pages[n-x.first] = p
	}
	p.items[it.id%indexPageSize] = it
	p.n++
}

func (x *itemIndex) delete(id ItemID) {
	p := x.page(id)
	if p == nil || p.items[id%indexPageSize] == nil {
		return
	}
	p.items[id%indexPageSize] = nil
	if p.n--; p.n > 0 {
		return
	}
	x.pages[id/indexPageSize-x.first] = nil
	for len(x.pages) > 0 && x.pages[0] == nil {
		x.pages = x.pages[1:]
		x.first++
	}
}
