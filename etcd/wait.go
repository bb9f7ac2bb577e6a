package etcd

import (
	"context"
	"time"

	"github.com/leasehold/lease/lock"
)

// AcquireWait acquires the lock name for executionID with a lease of d and
// value attached, as AcquireValue does, waiting while someone holds it,
// until ctx is done. It makes Provider a lock.Waiter.
//
// Waiting is a watch, not polling: an attempt that finds the key held
// watches the key from the revision it read it at, and the next attempt
// follows the key's DELETE event, which a Release makes at once and etcd's
// revocation of an expired lease makes once etcd notices the expiry (up to
// half a second late). A key whose holder's recorded ExpiresAt has passed is
// waited for the same way, without the time limit Acquire puts on it: the
// lock is held until etcd deletes the key. A watch that ends without a
// delete (etcd lost its leader, or compacted the revision) is followed by
// another attempt and a new watch.
//
// Every waiter watches the key, so a delete wakes all the waiters of a name,
// in every process, and the first transaction wins; the others watch again.
// Waiters are therefore not served in order of arrival, unlike Memory's.
//
// When ctx is done first AcquireWait returns ctx.Err() and holds nothing: a
// lock acquired as ctx ended is released first.
func (p *Provider) AcquireWait(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	if err := checkAcquire(ctx, name, executionID, d, value); err != nil {
		return nil, err
	}
	ttl := ttlSeconds(d)
	for {
		l, _, rev, err := p.tryAcquire(ctx, name, executionID, ttl, value)
		if cerr := ctx.Err(); cerr != nil {
			if l != nil {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), revokeTimeout)
				_ = p.releaseOne(rctx, *l)
				cancel()
			}
			return nil, cerr
		}
		if err != nil || l != nil {
			return l, err
		}
		p.deleted(ctx, p.key(name), rev)
	}
}
