package bench

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jellydator/ttlcache/v3"
)

// TTLCache drives a jellydator/ttlcache v3 cache as a lease table: a lease
// is an item keyed by its ID, Renew is Touch and Revoke is Delete, and the
// cache's own expiry loop runs. ttlcache does not report unknown keys, so
// Renew and Revoke of an unknown ID succeed silently. It is safe for
// concurrent use.
type TTLCache struct {
	cache *ttlcache.Cache[ID, struct{}]
	last  atomic.Uint64
	done  chan struct{} // closed when the expiry loop returns
	unsub func()
}

// NewTTLCache returns an adapter over a fresh, started cache.
func NewTTLCache() *TTLCache {
	t := &TTLCache{cache: ttlcache.New[ID, struct{}](), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		t.cache.Start()
	}()
	return t
}

// TTLCachePeer describes ttlcache v3.
func TTLCachePeer() Peer {
	return Peer{Key: "ttlcache", Name: "ttlcache v3", New: func() (Leaser, error) { return NewTTLCache(), nil }}
}

func (*TTLCache) concurrent() {}

// Grant sets a new item with ttl.
func (t *TTLCache) Grant(ttl time.Duration) (ID, error) {
	id := ID(t.last.Add(1))
	t.cache.Set(id, struct{}{}, ttl)
	return id, nil
}

// Renew touches the item, extending it by its TTL.
func (t *TTLCache) Renew(id ID) error {
	t.cache.Touch(id)
	return nil
}

// Revoke deletes the item.
func (t *TTLCache) Revoke(id ID) error {
	t.cache.Delete(id)
	return nil
}

// Deadline returns the item's expiry without touching it.
func (t *TTLCache) Deadline(id ID) (time.Time, error) {
	it := t.cache.Get(id, ttlcache.WithDisableTouchOnHit[ID, struct{}]())
	if it == nil {
		return time.Time{}, ErrUnknown
	}
	return it.ExpiresAt(), nil
}

// OnExpire subscribes fn to evictions for expiry. ttlcache calls each
// subscriber on a goroutine of its own per evicted item.
func (t *TTLCache) OnExpire(fn func(ID)) {
	t.unsub = t.cache.OnEviction(func(_ context.Context, r ttlcache.EvictionReason, it *ttlcache.Item[ID, struct{}]) {
		if r == ttlcache.EvictionReasonExpired {
			fn(it.Key())
		}
	})
}

// Close unsubscribes (waiting for running callbacks) and stops the
// expiry loop.
func (t *TTLCache) Close() error {
	if t.unsub != nil {
		t.unsub()
	}
	// Stop does nothing if Start has not marked the loop running yet, so
	// repeat it until the loop is gone.
	for {
		t.cache.Stop()
		select {
		case <-t.done:
			return nil
		case <-time.After(time.Millisecond):
		}
	}
}
