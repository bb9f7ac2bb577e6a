package election

import (
	"context"

	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// watch is Observe on a lockprovider.HolderWatcher: a goroutine follows the watch,
// starting it again a poll interval after it fails, until ctx is done.
func (e *Election) watch(ctx context.Context, w lockprovider.HolderWatcher) <-chan Leader {
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
