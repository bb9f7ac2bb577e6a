package etcd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// Holder returns who holds the lock name, read from its key in one Get: the
// execution ID and value its holder recorded, the key's create revision as
// the Token, and the ExpiresAt the holder recorded, on the holder's clock.
// It makes Provider a lockprovider.Inspector.
//
// A key whose recorded ExpiresAt has passed on the caller's clock is not
// reported, though etcd may keep it up to half a second longer (Renew
// refuses it too); nor is a key under the prefix that this package did not
// write, which Acquire nevertheless finds held.
func (p *Provider) Holder(ctx context.Context, name string) (lock.Holding, bool, error) {
	if err := lockprovider.CheckHolder(ctx, name); err != nil {
		return lock.Holding{}, false, err
	}
	resp, err := p.client.Get(ctx, p.key(name))
	if err != nil {
		return lock.Holding{}, false, fmt.Errorf("etcd: holder %q: %w", name, err)
	}
	now := p.clock.Now()
	for _, kv := range resp.Kvs {
		if h, ok := p.inspect(kv, now); ok {
			return h, true, nil
		}
	}
	return lock.Holding{}, false, nil
}

// Held returns the locks held whose names start with prefix, in name order
// (etcd's order of keys, bytewise), at most limit of them if limit > 0, as
// Holder reports each. It reads the keys with one ranged Get, or with a
// limit, page after page at the revision of the first, until it has limit
// holdings or no more keys: the answer is one snapshot of the store, and
// keys that are left out (expired, foreign) do not make it shorter than
// limit while more locks are held. It makes Provider a lockprovider.Inspector.
func (p *Provider) Held(ctx context.Context, prefix string, limit int) ([]lock.Holding, error) {
	if err := lockprovider.CheckHeld(ctx, limit); err != nil {
		return nil, err
	}
	from := p.key(prefix)
	end := clientv3.GetPrefixRangeEnd(from)
	var out []lock.Holding
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		if limit > 0 {
			opts = append(opts, clientv3.WithLimit(int64(limit-len(out))))
		}
		resp, err := p.client.Get(ctx, from, opts...)
		if err != nil {
			return nil, fmt.Errorf("etcd: held %q: %w", prefix, err)
		}
		rev = resp.Header.Revision
		now := p.clock.Now()
		for _, kv := range resp.Kvs {
			if h, ok := p.inspect(kv, now); ok {
				out = append(out, h)
			}
		}
		if !resp.More || len(resp.Kvs) == 0 || (limit > 0 && len(out) >= limit) {
			return out, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00" // the next key
	}
}

// inspect makes the holding of a lock's key, if the key is one this package
// wrote and its recorded expiry is after now.
func (p *Provider) inspect(kv *mvccpb.KeyValue, now time.Time) (lock.Holding, bool) {
	h, ok := decodeHolding(kv.Value)
	if !ok || kv.CreateRevision <= 0 || !now.Before(h.expiresAt) {
		return lock.Holding{}, false
	}
	return lock.Holding{
		Name:        strings.TrimPrefix(string(kv.Key), p.prefix),
		ExecutionID: h.executionID,
		Token:       uint64(kv.CreateRevision),
		ExpiresAt:   h.expiresAt,
		Value:       h.value, // decodeHolding's own copy
	}, true
}
