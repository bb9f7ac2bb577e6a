package etcd

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// errWatchEnded is the failure of a watch that etcd or the client closed
// while its context was still live (the client was closed, or the member
// lost its leader).
var errWatchEnded = errors.New("the watch ended")

// WatchHolder follows the holder of the lock name: it calls fn with the
// holding when it is called, if the lock is held, and then with each
// holding written to the lock's key (a new holder, or a renewal of the
// same one), as Holder would report it, in the order etcd wrote them,
// until ctx is done or the watch fails. It returns ctx.Err() in the first
// case and the failure in the second. It makes Provider an
// lockprovider.HolderWatcher, so that an election's Observe follows a watch,
// as etcd's own election does, instead of polling.
//
// It opens the watch first, from the present, and then reads the key, so
// that nothing written in between is missed; the writes the read already
// shows are skipped. The watch requires the member to have a leader: on a
// member cut off from its cluster it fails rather than stay silent. fn is
// called on WatchHolder's goroutine, one call at a time, and is not called
// once it has returned; the watch is closed by then.
func (p *Provider) WatchHolder(ctx context.Context, name string, fn func(lock.Holding)) error {
	if err := lockprovider.CheckHolder(ctx, name); err != nil {
		return err
	}
	if fn == nil {
		return invalid("watch holder", "fn", "must not be nil")
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel() // closes the watch
	k := p.key(name)
	wch := p.client.Watch(wctx, k, clientv3.WithFilterDelete(), clientv3.WithCreatedNotify())
	created, ok := <-wch
	if err := watchFailure(ctx, created, ok); err != nil {
		return fmt.Errorf("etcd: watch holder %q: %w", name, err)
	}
	resp, err := p.client.Get(ctx, k)
	if err != nil {
		return fmt.Errorf("etcd: watch holder %q: %w", name, err)
	}
	seen := resp.Header.Revision // every write up to it is in resp
	now := p.clock.Now()
	for _, kv := range resp.Kvs {
		if h, ok := p.inspect(kv, now); ok {
			fn(h)
		}
	}
	for {
		wr, ok := <-wch
		if err := watchFailure(ctx, wr, ok); err != nil {
			return fmt.Errorf("etcd: watch holder %q: %w", name, err)
		}
		now := p.clock.Now()
		for _, ev := range wr.Events {
			if ev.Kv.ModRevision <= seen {
				continue
			}
			if h, ok := p.inspect(ev.Kv, now); ok {
				fn(h)
			}
		}
	}
}

// watchFailure returns why a watch cannot go on after delivering wr (ok
// false: its channel closed), or nil if it can: ctx.Err() once ctx is
// done, else the watch's error.
func watchFailure(ctx context.Context, wr clientv3.WatchResponse, ok bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !ok {
		return errWatchEnded
	}
	if err := wr.Err(); err != nil {
		return err
	}
	if wr.Canceled {
		return errWatchEnded
	}
	return nil
}
