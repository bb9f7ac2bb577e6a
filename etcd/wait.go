package etcd

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasehold/lease/lock"
)

// QueueTTL is the TTL of the etcd lease that keeps a waiter's place in the
// queue of a lock. A waiting AcquireWait keeps that lease alive; when its
// process dies, etcd deletes its queue key once the lease expires, at most
// QueueTTL (and etcd's half-second expiry scan) later, and the waiters
// behind it move up.
const QueueTTL = 5 * time.Second

// queueSep separates the name of a lock from the waiter IDs in the keys of
// its queue: a waiter's key is the lock's key, queueSep, then the waiter's
// etcd lease ID in 16 hex digits. Lock names with this byte in them share
// key space with queues and should not be used.
const queueSep = "\x00"

// queueTag starts the value of a queue key, followed by the waiter's
// execution ID. No holding's encoding starts with it, so Holder and Held
// never report a queue key as a lock.
const queueTag = "waiting "

// queuePrefix is the common prefix of the keys of name's waiters.
func (p *Provider) queuePrefix(name string) string { return p.key(name) + queueSep }

// AcquireWait acquires the lock name for executionID with a lease of d,
// waiting while someone holds it, until ctx is done: AcquireWaitValue with
// no value. It makes Provider a lockprovider.Waiter.
func (p *Provider) AcquireWait(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	return p.AcquireWaitValue(ctx, name, executionID, d, nil)
}

// AcquireWaitValue acquires the lock name for executionID with a lease of
// d and value attached, as AcquireValue does, waiting while someone holds
// it, until ctx is done. It makes Provider a lockprovider.ValueWaiter.
//
// Waiters of a name are served in order of arrival (FIFO), across every
// process that shares the cluster and the prefix. An AcquireWait that finds
// the lock free and no one queued takes it at once. Otherwise it joins the
// queue: it writes a key of its own next to the lock's key, attached to an
// etcd lease of [QueueTTL] that it keeps alive while it waits, and the
// key's create revision is its place. It waits, by watching, until no queue
// key with a lower create revision is left and the lock's key is absent,
// then takes the lock and deletes its queue key in one transaction. The
// order holds among waiters only: Acquire does not queue, and may take a
// lock that was just released before the first waiter does, which then
// waits for the next release without losing its place.
//
// Each watch starts right after the revision at which its key was read;
// if writes landed in the store in between, so that etcd would catch the
// watch up on its periodic resync (100 ms), it watches from the present
// instead and reads the key once more. A release therefore reaches the
// first waiter within a round trip, however recently it queued.
//
// A waiter whose ctx ends deletes its queue key (revokes its etcd lease)
// before it returns ctx.Err(), so the next waiter moves up at once; a lock
// acquired as ctx ended is released first. Each of these calls is given a
// tenth of the lock's TTL (at most 5 s): when etcd cannot be reached, the
// waiter returns that long after ctx ended, and the queue key expires
// with its lease. A waiter whose process dies
// leaves its key until its etcd lease expires, up to QueueTTL, during which
// the waiters behind it wait. The lock's holder is unaffected by the queue:
// a holder's key whose recorded ExpiresAt has passed is waited out with no
// ExpiryWait limit, until etcd deletes it.
func (p *Provider) AcquireWaitValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	if err := checkAcquire(ctx, name, executionID, d, value); err != nil {
		return nil, err
	}
	ttl := ttlSeconds(d)
	k := p.key(name)
	l, _, err := p.put(ctx, name, executionID, ttl, value,
		[]clientv3.Cmp{
			clientv3.Compare(clientv3.CreateRevision(k), "=", 0),
			clientv3.Compare(clientv3.CreateRevision(p.queuePrefix(name)), "=", 0).WithPrefix(),
		}, nil)
	for l == nil && err == nil && ctx.Err() == nil {
		var lost bool
		l, lost, err = p.queue(ctx, name, executionID, ttl, value)
		if !lost {
			break
		}
		// Our queue key went with its etcd lease (the keep-alives did not
		// reach etcd in time): queue again, at the back.
	}
	if cerr := ctx.Err(); cerr != nil {
		if l != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout(ttl))
			_ = p.releaseOne(rctx, *l)
			cancel()
		}
		return nil, cerr
	}
	return l, err
}

// queue puts a waiter for name in the queue and waits for its turn and a
// free lock, then takes the lock. lost reports that the waiter's queue key
// vanished (its etcd lease expired) before that.
func (p *Provider) queue(ctx context.Context, name, executionID string, ttl int64, value []byte) (l *lock.Lease, lost bool, err error) {
	qk, place, leave, err := p.enqueue(ctx, name, executionID, ttl)
	if err != nil {
		return nil, false, fmt.Errorf("etcd: acquire %q: %w", name, err)
	}
	defer func() { leave(l != nil) }()
	k := p.key(name)
	for ctx.Err() == nil {
		// One read, at one revision: our key, the waiter just ahead of us,
		// and the lock's key.
		resp, err := p.client.Txn(ctx).Then(
			clientv3.OpGet(qk),
			clientv3.OpGet(p.queuePrefix(name), append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(place-1))...),
			clientv3.OpGet(k),
		).Commit()
		if err != nil {
			return nil, false, fmt.Errorf("etcd: acquire %q: read the queue: %w", name, err)
		}
		at := resp.Header.Revision
		if len(kvs(resp, 0)) == 0 {
			return nil, true, nil
		}
		if ahead := kvs(resp, 1); len(ahead) > 0 {
			p.gone(ctx, ahead[0], at)
			continue
		}
		if held := kvs(resp, 2); len(held) > 0 && !p.gone(ctx, held[0], at) {
			continue
		}
		// We are first (a place ahead only ever empties) and the lock's key
		// is absent, or was deleted since the read: try at once, a round
		// trip sooner than a read would allow. The transaction checks both.
		got, _, err := p.put(ctx, name, executionID, ttl, value,
			[]clientv3.Cmp{
				clientv3.Compare(clientv3.CreateRevision(k), "=", 0),
				clientv3.Compare(clientv3.CreateRevision(qk), "=", place),
			},
			[]clientv3.Op{clientv3.OpDelete(qk)})
		if err != nil || got != nil {
			return got, false, err
		}
		// Acquire took the lock first, or our key is gone: read again.
	}
	return nil, false, nil // the caller returns ctx.Err()
}

// kvs returns the keys read by the i-th operation of a transaction.
func kvs(resp *clientv3.TxnResponse, i int) []*mvccpb.KeyValue {
	return resp.Responses[i].GetResponseRange().GetKvs()
}

// enqueue writes a queue key for a waiter of name, attached to a new etcd
// lease of QueueTTL that it keeps alive until leave, which also revokes the
// lease (within the cleanup timeout of a lock of ttl seconds) and so
// deletes the key if it is still there. It returns the key and
// its create revision: the waiter's place.
//
// leave(true) says the key is already gone, deleted with the lock's
// taking: the lease then holds nothing, and its revocation, which only
// spares etcd from keeping it until it expires, runs in the background
// rather than delay the new holder.
func (p *Provider) enqueue(ctx context.Context, name, executionID string, ttl int64) (key string, place int64, leave func(taken bool), err error) {
	g, err := p.client.Grant(ctx, ttlSeconds(QueueTTL))
	if err != nil {
		return "", 0, nil, fmt.Errorf("grant a queue lease: %w", err)
	}
	kctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	leave = func(taken bool) {
		stop()
		if taken {
			go p.revoke(ctx, g.ID, ttl)
		} else {
			p.revoke(ctx, g.ID, ttl)
		}
	}
	acks, err := p.client.KeepAlive(kctx, g.ID)
	if err != nil {
		leave(false)
		return "", 0, nil, fmt.Errorf("keep the queue lease alive: %w", err)
	}
	go func() {
		for range acks { // closed once kctx ends
		}
	}()
	key = fmt.Sprintf("%s%016x", p.queuePrefix(name), uint64(g.ID))
	resp, err := p.client.Put(ctx, key, queueTag+executionID, clientv3.WithLease(g.ID))
	if err != nil {
		leave(false)
		return "", 0, nil, fmt.Errorf("queue: %w", err)
	}
	// Lease IDs are unique, so the put created the key.
	return key, resp.Header.Revision, leave, nil
}

// gone waits until kv, read at revision at, is deleted, and reports whether
// it saw that happen. It returns false when the wait ends otherwise: ctx is
// done, etcd has no leader, or the client is closed; the caller looks again.
func (p *Provider) gone(ctx context.Context, kv *mvccpb.KeyValue, at int64) bool {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel() // ends the watches
	key := string(kv.Key)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	wch := p.client.Watch(wctx, key, clientv3.WithRev(at+1), clientv3.WithFilterPut(), clientv3.WithCreatedNotify())
	created, ok := <-wch
	if !ok || created.Err() != nil || created.Canceled {
		return false
	}
	if created.Header.Revision > at {
		// The store moved on between the read and the watch, so etcd may
		// have filed this watch among those it replays history to on a
		// 100 ms timer. Watch from the present instead, which etcd serves at
		// once, and read the key again to cover the revisions in between.
		stop()
		wch = p.client.Watch(ctx, key, clientv3.WithFilterPut(), clientv3.WithCreatedNotify())
		created, ok := <-wch
		if !ok || created.Err() != nil || created.Canceled {
			return false
		}
		resp, err := p.client.Get(ctx, key)
		if err != nil {
			return false
		}
		if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != kv.CreateRevision {
			return true
		}
	}
	for resp := range wch {
		if resp.Err() != nil {
			return false
		}
		for _, ev := range resp.Events {
			if ev.Type == mvccpb.DELETE {
				return true
			}
		}
	}
	return false
}
