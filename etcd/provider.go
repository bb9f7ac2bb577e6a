package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// ExpiryWait is how long Acquire waits, at most, for etcd to delete the key
// of a lock whose holder's ExpiresAt has passed on the caller's clock: etcd's
// lessor looks for expired leases every 500 ms, then deletes their keys
// through the consensus log.
const ExpiryWait = time.Second

// renewAttempts bounds how often Renew re-reads a key that another call for
// the same holding changed under it.
const renewAttempts = 3

// revokeTimeout is the most a cleanup call is given: one that runs even
// when the caller's context is done, such as the best-effort revocation of
// a lease that is no longer needed.
const revokeTimeout = 5 * time.Second

// cleanupTimeout bounds a cleanup call for a lock of ttl seconds: a tenth
// of the TTL (so at least 100 ms), and at most revokeTimeout. A caller
// whose context is done, such as a leader that gave up on an unreachable
// cluster, thus waits for its cleanup no longer than its lease's schedule
// allows for a retry.
func cleanupTimeout(ttl int64) time.Duration {
	return min(revokeTimeout, time.Duration(ttl)*time.Second/10)
}

// Provider is a [lock.Provider] that keeps locks as keys of an etcd cluster,
// each attached to an etcd lease. It is safe for concurrent use, from any
// number of goroutines and processes sharing the cluster and the key prefix:
// all coordination happens in etcd, in transactions.
type Provider struct {
	client *clientv3.Client
	prefix string
	clock  lease.Clock // never runs backwards; see WithClock
}

var (
	_ lock.Provider              = (*Provider)(nil)
	_ lockprovider.ValueAcquirer = (*Provider)(nil)
	_ lockprovider.ValueWaiter   = (*Provider)(nil)
	_ lockprovider.Inspector     = (*Provider)(nil)

	_ lockprovider.HolderWatcher = (*Provider)(nil)
)

// New returns a Provider that keeps its locks in the cluster client talks
// to. It sends nothing to etcd, and the caller keeps ownership of client
// (close it after the last call). New returns an error matching
// lease.ErrInvalidArgument when client is nil or an option is invalid.
func New(client *clientv3.Client, opts ...Option) (*Provider, error) {
	if client == nil {
		return nil, invalid("new", "client", "must not be nil")
	}
	c := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return nil, invalid("new", "Option", "option must not be nil")
		}
		o.apply(&c)
	}
	switch {
	case c.prefix == "":
		return nil, invalid("new", "prefix", "must not be empty")
	case c.clock == nil:
		return nil, invalid("new", "clock", "must not be nil")
	}
	return &Provider{client: client, prefix: c.prefix, clock: c.clock}, nil
}

func (p *Provider) key(name string) string { return p.prefix + name }

// Acquire takes the lock name for executionID, for d rounded up to whole
// seconds (or the server's minimum TTL, if that is longer), if nobody holds
// it. It returns nil, nil when someone holds it, the same executionID
// included. The new Lease's Token is the key's create revision, greater than
// every token issued before for name; its ExpiresAt is the caller's clock at
// the start of the call plus the granted TTL.
//
// When the holder's recorded ExpiresAt has passed but etcd has not yet
// deleted the key, Acquire waits up to [ExpiryWait] for the deletion.
//
// On an error the outcome may be unknown; a lock taken that way is held by a
// lease that Acquire tries to revoke, and that otherwise expires after the
// TTL.
func (p *Provider) Acquire(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	return p.AcquireValue(ctx, name, executionID, d, nil)
}

// AcquireValue is Acquire that also records value (a copy) in the lock's
// key, for Holder and Held to report; Renew keeps it. It makes Provider a
// lockprovider.ValueAcquirer. A value longer than lock.MaxValueSize is refused with
// an error matching lease.ErrInvalidArgument.
func (p *Provider) AcquireValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	if err := checkAcquire(ctx, name, executionID, d, value); err != nil {
		return nil, err
	}
	ttl := ttlSeconds(d)
	for waited := false; ; waited = true {
		l, holder, rev, err := p.tryAcquire(ctx, name, executionID, ttl, value)
		if err != nil || l != nil {
			return l, err
		}
		h, ok := decodeHolding(holder.Value)
		if waited || !ok || p.clock.Now().Before(h.expiresAt) {
			return nil, nil // held, and not past its holder's expiry
		}
		gone, err := p.awaitDeletion(ctx, holder, rev)
		if err != nil {
			return nil, fmt.Errorf("etcd: acquire %q: %w", name, err)
		}
		if !gone {
			return nil, nil
		}
	}
}

// tryAcquire grants a lease and creates the key with it if the key is
// absent. It returns the new Lease, or, when the key exists, the key as it
// was and the store's revision at which it was read: any later change of
// the key has a greater revision.
func (p *Provider) tryAcquire(ctx context.Context, name, executionID string, ttl int64, value []byte) (*lock.Lease, *mvccpb.KeyValue, int64, error) {
	k := p.key(name)
	l, resp, err := p.put(ctx, name, executionID, ttl, value,
		[]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(k), "=", 0)}, nil,
		clientv3.OpGet(k))
	if err != nil || l != nil {
		return l, nil, 0, err
	}
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return nil, nil, 0, fmt.Errorf("etcd: acquire %q: the key exists but reads as absent", name)
	}
	return nil, kvs[0], resp.Header.Revision, nil
}

// put grants a lease and, in one transaction, creates the key of name with
// it, and runs also, if every condition in ifs holds; otherwise it runs
// orElse. It returns the new Lease, or nil and the transaction's response
// when a condition failed (the lease is then revoked).
func (p *Provider) put(ctx context.Context, name, executionID string, ttl int64, value []byte, ifs []clientv3.Cmp, also []clientv3.Op, orElse ...clientv3.Op) (*lock.Lease, *clientv3.TxnResponse, error) {
	now := p.clock.Now()
	g, err := p.client.Grant(ctx, ttl)
	if err != nil {
		return nil, nil, fmt.Errorf("etcd: acquire %q: grant a lease of %d s: %w", name, ttl, err)
	}
	h := holding{executionID: executionID, expiresAt: now.Add(time.Duration(g.TTL) * time.Second), ttl: ttl, value: value}
	resp, err := p.client.Txn(ctx).
		If(ifs...).
		Then(append([]clientv3.Op{clientv3.OpPut(p.key(name), h.encode(), clientv3.WithLease(g.ID))}, also...)...).
		Else(orElse...).
		Commit()
	if err != nil {
		p.revoke(ctx, g.ID, ttl) // if the put went through, this frees the lock again
		return nil, nil, fmt.Errorf("etcd: acquire %q: %w", name, err)
	}
	if resp.Succeeded {
		// All the writes of a transaction share one revision, the store's
		// revision after it, which is thus the key's create revision.
		return &lock.Lease{Name: name, ExecutionID: executionID, ExpiresAt: h.expiresAt, Token: uint64(resp.Header.Revision)}, nil, nil
	}
	p.revoke(ctx, g.ID, ttl)
	return nil, resp, nil
}

// awaitDeletion waits up to ExpiryWait for a delete of the key kv, read at
// revision rev. It reports whether one happened, or whether the watch
// failed in a way that makes another look at the key worthwhile.
func (p *Provider) awaitDeletion(ctx context.Context, kv *mvccpb.KeyValue, rev int64) (bool, error) {
	wctx, cancel := context.WithTimeout(ctx, ExpiryWait)
	defer cancel()
	gone := p.gone(wctx, kv, rev)
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return gone || wctx.Err() == nil, nil
}

// Renew extends every lease in leases that still holds its lock (same name,
// token and execution ID, its ExpiresAt not passed on the caller's clock,
// and its etcd lease alive) to d, rounded up to whole seconds, from the
// caller's clock at the time of its request. It returns those, in input
// order, with their new ExpiresAt and unchanged Token; the others are
// silently skipped.
//
// When d rounds to the TTL the lock was acquired or last renewed with, Renew
// keeps the etcd lease alive; otherwise, since etcd cannot change a lease's
// TTL, it moves the key to a new etcd lease of the new TTL and revokes the
// old one. Either way the key, and so the token, stay.
//
// Each lease takes a few round trips. On an error, Renew returns it and no
// leases, though leases before the failing one may have been renewed.
func (p *Provider) Renew(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
	if err := checkRenew(ctx, leases, d); err != nil {
		return nil, err
	}
	ttl := ttlSeconds(d)
	var out []lock.Lease
	for _, l := range leases {
		expires, ok, err := p.renewOne(ctx, l, ttl)
		if err != nil {
			return nil, fmt.Errorf("etcd: renew %q: %w", l.Name, err)
		}
		if ok {
			l.ExpiresAt = expires
			out = append(out, l)
		}
	}
	return out, nil
}

func (p *Provider) renewOne(ctx context.Context, l lock.Lease, ttl int64) (time.Time, bool, error) {
	k := p.key(l.Name)
	for range renewAttempts {
		// The clock is read per lease, before its requests: a later read
		// could report an ExpiresAt after the server's expiry.
		now := p.clock.Now()
		kv, h, err := p.holding(ctx, k, l)
		if err != nil || kv == nil || !now.Before(h.expiresAt) {
			return time.Time{}, false, err
		}
		old := clientv3.LeaseID(kv.Lease)
		// KeepAliveOnce fails for a lease that expired on the server (after
		// waiting for its revocation), so an expired lease is never revived.
		ka, err := p.client.KeepAliveOnce(ctx, old)
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return time.Time{}, false, nil
		}
		if err != nil {
			return time.Time{}, false, err
		}
		cmp := []clientv3.Cmp{
			clientv3.Compare(clientv3.CreateRevision(k), "=", kv.CreateRevision),
			clientv3.Compare(clientv3.LeaseValue(k), "=", old),
		}
		if ttl == h.ttl {
			nh := holding{executionID: l.ExecutionID, expiresAt: now.Add(time.Duration(ka.TTL) * time.Second), ttl: ttl, value: h.value}
			resp, err := p.client.Txn(ctx).If(cmp...).Then(clientv3.OpPut(k, nh.encode(), clientv3.WithIgnoreLease())).Commit()
			if err != nil {
				return time.Time{}, false, err
			}
			if resp.Succeeded {
				return nh.expiresAt, true, nil
			}
			continue // another call for this holding moved it: look again
		}
		g, err := p.client.Grant(ctx, ttl)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("grant a lease of %d s: %w", ttl, err)
		}
		nh := holding{executionID: l.ExecutionID, expiresAt: now.Add(time.Duration(g.TTL) * time.Second), ttl: ttl, value: h.value}
		resp, err := p.client.Txn(ctx).If(cmp...).Then(clientv3.OpPut(k, nh.encode(), clientv3.WithLease(g.ID))).Commit()
		if err != nil {
			p.revoke(ctx, g.ID, ttl)
			return time.Time{}, false, err
		}
		if !resp.Succeeded {
			p.revoke(ctx, g.ID, ttl)
			continue
		}
		p.revoke(ctx, old, h.ttl) // nothing is attached to it any more
		return nh.expiresAt, true, nil
	}
	return time.Time{}, false, nil
}

// holding reads the key of l and returns it and what it records if it is
// still l's holding: the token is the key's create revision, and the
// execution ID matches. Otherwise kv is nil.
func (p *Provider) holding(ctx context.Context, key string, l lock.Lease) (*mvccpb.KeyValue, holding, error) {
	resp, err := p.client.Get(ctx, key)
	if err != nil {
		return nil, holding{}, err
	}
	if len(resp.Kvs) == 0 {
		return nil, holding{}, nil
	}
	kv := resp.Kvs[0]
	h, ok := decodeHolding(kv.Value)
	if !ok || kv.CreateRevision <= 0 || uint64(kv.CreateRevision) != l.Token || h.executionID != l.ExecutionID {
		return nil, holding{}, nil
	}
	return kv, h, nil
}

// Release frees every lease in leases that still holds its lock (same name,
// token and execution ID): it deletes the key, in a transaction that checks
// the key's create revision, and revokes the etcd lease. Releasing a lease
// that was already released, has expired, or was never issued is not an
// error, and a release never frees a lock someone else now holds, nor a
// later holding of the same execution. A released lock can be acquired at
// once.
//
// On an error, Release returns it, though leases before the failing one
// were released.
func (p *Provider) Release(ctx context.Context, leases []lock.Lease) error {
	if err := lockprovider.CheckRelease(ctx, leases); err != nil {
		return err
	}
	for _, l := range leases {
		if err := p.releaseOne(ctx, l); err != nil {
			return fmt.Errorf("etcd: release %q: %w", l.Name, err)
		}
	}
	return nil
}

func (p *Provider) releaseOne(ctx context.Context, l lock.Lease) error {
	k := p.key(l.Name)
	kv, h, err := p.holding(ctx, k, l)
	if err != nil || kv == nil {
		return err
	}
	// The create revision names the holding, whose execution ID never
	// changes, so comparing it is enough.
	resp, err := p.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", kv.CreateRevision)).
		Then(clientv3.OpDelete(k, clientv3.WithPrevKV())).
		Commit()
	if err != nil || !resp.Succeeded {
		return err
	}
	for _, prev := range resp.Responses[0].GetResponseDeleteRange().GetPrevKvs() {
		p.revoke(ctx, clientv3.LeaseID(prev.Lease), h.ttl)
	}
	return nil
}

// revoke revokes an etcd lease that holds no lock any more, best effort,
// even if ctx is done, within the cleanup timeout of a lock of ttl
// seconds: one that is not revoked expires after its TTL, holding
// nothing.
func (p *Provider) revoke(ctx context.Context, id clientv3.LeaseID, ttl int64) {
	if id == clientv3.NoLease {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout(ttl))
	defer cancel()
	_, _ = p.client.Revoke(rctx, id)
}
