package bench

import (
	"errors"
	"time"
)

// ID identifies a lease within one adapter. Adapters issue IDs from 1 up.
type ID uint64

// ErrUnknown is returned by adapters that can tell when an operation names
// a lease they do not hold.
var ErrUnknown = errors.New("bench: unknown lease")

// Leaser is the small surface every peer is driven through: the operations
// all of them share. Whether an implementation is safe for concurrent use
// is reported by Concurrent.
type Leaser interface {
	// Grant creates a lease that expires ttl from now.
	Grant(ttl time.Duration) (ID, error)
	// Renew extends the lease by its TTL from now.
	Renew(id ID) error
	// Revoke ends the lease, deleting any keys attached to it.
	Revoke(id ID) error
	// Deadline returns when the lease expires, as the peer computed it.
	Deadline(id ID) (time.Time, error)
	// Close releases everything the adapter holds (goroutines, files).
	Close() error
}

// Keyed is implemented by peers that can attach keys to a lease so that
// they are deleted when it ends.
type Keyed interface {
	// Attach stores key with value, attached to the lease.
	Attach(id ID, key string, value []byte) error
	// Holder returns the lease key is attached to, and whether key exists.
	Holder(key string) (ID, bool)
}

// KeyedLeaser is a Leaser that can attach keys.
type KeyedLeaser interface {
	Leaser
	Keyed
}

// Expirer is implemented by peers that expire leases on the real clock by
// themselves. OnExpire must be called before the first Grant; fn is called
// once per expired lease, after its keys are gone, from whatever goroutine
// the peer uses.
type Expirer interface {
	OnExpire(fn func(ID))
}

// Sweeper is implemented by peers with no timer of their own: Sweep expires
// every lease due at or before now and returns how many it expired.
type Sweeper interface {
	Sweep(now time.Time) int
}

// Concurrent reports whether l may be used by several goroutines at once.
func Concurrent(l Leaser) bool {
	_, ok := l.(interface{ concurrent() })
	return ok
}

// Peer names an adapter and constructs fresh instances of it.
type Peer struct {
	Key  string // short name for flags: lease, etcd, ttlcache, map+heap, timers
	Name string // name in reports
	// New returns a fresh, empty instance.
	New func() (Leaser, error)
	// SlowExpiry marks a peer whose expiry is rate-limited and whose writes
	// are durable: scenarios 5, 6 and 7k use Config.SlowExpiry, SlowLag and
	// SlowKeyed leases for it, with Why saying why in the report.
	SlowExpiry bool
	Why        string
}

// Peers returns every peer, ours first.
func Peers() []Peer {
	return []Peer{OursPeer(), EtcdPeer(), TTLCachePeer(), BaselinePeer(), TimersPeer(), TimerLoopPeer()}
}
