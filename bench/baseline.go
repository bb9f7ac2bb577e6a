package bench

import (
	"container/heap"
	"time"
)

// Baseline is the floor: an unsynchronised map plus an indexed
// container/heap, with no audit, no keys, no lock and no timer. It is not
// safe for concurrent use; leases expire only when Sweep is called.
type Baseline struct {
	last  ID
	items map[ID]*baseItem
	heap  baseHeap
}

type baseItem struct {
	id       ID
	ttl      time.Duration
	deadline time.Time
	index    int
}

// NewBaseline returns an empty baseline.
func NewBaseline() *Baseline { return &Baseline{items: make(map[ID]*baseItem)} }

// BaselinePeer describes the map+heap baseline.
func BaselinePeer() Peer {
	return Peer{Key: "map+heap", Name: "map+heap", New: func() (Leaser, error) { return NewBaseline(), nil }}
}

// Grant adds a lease due ttl from now.
func (b *Baseline) Grant(ttl time.Duration) (ID, error) {
	b.last++
	it := &baseItem{id: b.last, ttl: ttl, deadline: time.Now().Add(ttl)}
	b.items[it.id] = it
	heap.Push(&b.heap, it)
	return it.id, nil
}

// Renew moves the lease's deadline to now plus its TTL.
func (b *Baseline) Renew(id ID) error {
	it := b.items[id]
	if it == nil {
		return ErrUnknown
	}
	it.deadline = time.Now().Add(it.ttl)
	heap.Fix(&b.heap, it.index)
	return nil
}

// Revoke removes the lease.
func (b *Baseline) Revoke(id ID) error {
	it := b.items[id]
	if it == nil {
		return ErrUnknown
	}
	heap.Remove(&b.heap, it.index)
	delete(b.items, id)
	return nil
}

// Deadline returns the lease's deadline.
func (b *Baseline) Deadline(id ID) (time.Time, error) {
	it := b.items[id]
	if it == nil {
		return time.Time{}, ErrUnknown
	}
	return it.deadline, nil
}

// Sweep removes every lease due at or before now.
func (b *Baseline) Sweep(now time.Time) int {
	n := 0
	for len(b.heap) > 0 && !b.heap[0].deadline.After(now) {
		it := heap.Pop(&b.heap).(*baseItem)
		delete(b.items, it.id)
		n++
	}
	return n
}

// Close does nothing: the baseline holds no resources.
func (b *Baseline) Close() error { return nil }

type baseHeap []*baseItem

func (h baseHeap) Len() int           { return len(h) }
func (h baseHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h baseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *baseHeap) Push(x any) {
	it := x.(*baseItem)
	it.index = len(*h)
	*h = append(*h, it)
}

func (h *baseHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}
