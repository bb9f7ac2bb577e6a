package election

import (
	"context"

	"github.com/leasehold/lease/lock"
)

// HolderWatcher is a provider that can follow the holder of a lock as it
// changes, the way etcd's watches do, so that Observe sees a new leader
// as soon as the provider does instead of polling for it. The etcd
// provider is one. An implementation must be safe for concurrent use.
type HolderWatcher interface {
	// WatchHolder calls fn with the holding of the lock name, if it is
	// held, and then with every holding of it the provider learns of (a
	// new holder, or the same one renewed), in the order they happened,
	// until ctx is done or the watch fails. It returns ctx.Err() in the
	// first case and the failure in the second, and calls fn no more once
	// it has returned. fn is called on WatchHolder's goroutine, one call at
	// a time, and never blocks. Like lock.Inspector's Holder, a holding
	// whose lease has expired is not reported.
	WatchHolder(ctx context.Context, name string, fn func(lock.Holding)) error
}

// watch is Observe on a HolderWatcher: a goroutine follows the watch,
// starting it again a poll interval after it fails, until ctx is done.
func (e *Election) watch(ctx context.Context, w HolderWatcher) <-chan Leader {
	out := make(chan Leader, 1)
	go func() {
		defer close(out)
		var last uint64 // the token of the leader last sent; 0 for none
		for {
			_ = w.WatchHolder(ctx, e.name, func(h lock.Holding) {
				if h.Token > last {
					last = h.Token
					offer(out, leaderOf(h))
				}
			})
			if ctx.Err() != nil {
				return
			}
			e.pause(ctx, e.opts.poll)
		}
	}()
	return out
}
