package replication

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// etcdCluster is three etcd members in this process and a client on the
// leader's endpoint.
type etcdCluster struct {
	members []*embed.Etcd
	client  *clientv3.Client
	leases  pb.LeaseClient // the client's own connection, for kept streams
}

// startEtcd starts a 3-member etcd cluster with its data under dir, at
// etcd's defaults (100 ms heartbeat, 1 s election timeout, fsync on) apart
// from addresses and logging, and connects a client to the leader.
func startEtcd(ctx context.Context, dir string) (system, error) {
	const n = 3
	var cfgs []*embed.Config
	var initial []string
	urls, err := freeURLs(2 * n)
	if err != nil {
		return nil, err
	}
	for i := range n {
		client, peer := &urls[2*i], &urls[2*i+1]
		cfg := embed.NewConfig()
		cfg.Name = "m" + strconv.Itoa(i+1)
		cfg.Dir = filepath.Join(dir, cfg.Name)
		cfg.ListenClientUrls = []url.URL{*client}
		cfg.AdvertiseClientUrls = []url.URL{*client}
		cfg.ListenPeerUrls = []url.URL{*peer}
		cfg.AdvertisePeerUrls = []url.URL{*peer}
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		cfgs = append(cfgs, cfg)
		initial = append(initial, cfg.Name+"="+peer.String())
	}
	c := &etcdCluster{}
	for _, cfg := range cfgs {
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = "lease-bench"
		m, err := embed.StartEtcd(cfg)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("starting etcd member %s: %w", cfg.Name, err)
		}
		c.members = append(c.members, m)
	}
	for _, m := range c.members {
		select {
		case <-m.Server.ReadyNotify():
		case err := <-m.Err():
			c.close()
			return nil, fmt.Errorf("etcd member %s: %w", m.Config().Name, err)
		case <-ctx.Done():
			c.close()
			return nil, fmt.Errorf("waiting for etcd: %w", context.Cause(ctx))
		}
	}
	leader, err := waitFor(ctx, "an etcd leader", func() (*embed.Etcd, bool) {
		for _, m := range c.members {
			if m.Server.Leader() == m.Server.MemberID() {
				return m, true
			}
		}
		return nil, false
	})
	if err != nil {
		c.close()
		return nil, err
	}
	c.client, err = clientv3.New(clientv3.Config{
		Endpoints:   []string{leader.Clients[0].Addr().String()},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
		Context:     context.WithoutCancel(ctx),
	})
	if err != nil {
		c.close()
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	c.leases = pb.NewLeaseClient(c.client.ActiveConnection())
	return c, nil
}

// freeURLs returns n distinct http URLs on ports of 127.0.0.1 that were
// free a moment ago. The kernel picks them; the listeners stay open until all
// n are picked (it often hands a just-closed port to the next listener) and
// are then closed for etcd to take the ports.
func freeURLs(n int) (urls []url.URL, err error) {
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, ln.Close()) }()
		urls = append(urls, url.URL{Scheme: "http", Host: ln.Addr().String()})
	}
	return urls, nil
}

// seconds rounds ttl up to whole seconds, etcd's unit.
func seconds(ttl time.Duration) int64 { return int64((ttl + time.Second - 1) / time.Second) }

func (c *etcdCluster) grant(ctx context.Context, ttl time.Duration) (grant, error) {
	r, err := c.client.Grant(ctx, seconds(ttl))
	if err != nil {
		return grant{}, err
	}
	// etcd raises a TTL below its minimum (1.5 election timeouts, 2 s at
	// the defaults); the response has the TTL granted. The leader counts
	// from when it applied the grant, a little before the response.
	return grant{id: int64(r.ID), deadline: time.Now().Add(time.Duration(r.TTL) * time.Second)}, nil
}

func (c *etcdCluster) grantKey(ctx context.Context, ttl time.Duration, key string, value []byte) (grant, error) {
	g, err := c.grant(ctx, ttl)
	if err != nil {
		return grant{}, err
	}
	return g, c.put(ctx, key, value, g.id)
}

func (c *etcdCluster) put(ctx context.Context, key string, value []byte, id int64) error {
	_, err := c.client.Put(ctx, key, string(value), clientv3.WithLease(clientv3.LeaseID(id)))
	return err
}

func (c *etcdCluster) revoke(ctx context.Context, id int64) error {
	_, err := c.client.Revoke(ctx, clientv3.LeaseID(id))
	return err
}

func (c *etcdCluster) exactTTL() bool { return false }

func (c *etcdCluster) renewers() []renewer {
	return []renewer{
		{name: "KeepAliveOnce", open: c.keepAliveOnce},
		{name: "kept stream", open: c.keptStream},
	}
}

// keepAliveOnce renews with the client's KeepAliveOnce, which opens a
// keep-alive stream for each renewal.
func (c *etcdCluster) keepAliveOnce(_ context.Context, id int64) (func(context.Context) (time.Time, error), func(), error) {
	renew := func(ctx context.Context) (time.Time, error) {
		r, err := c.client.KeepAliveOnce(ctx, clientv3.LeaseID(id))
		if err != nil {
			return time.Time{}, err
		}
		return time.Now().Add(time.Duration(r.TTL) * time.Second), nil
	}
	return renew, func() {}, nil
}

// keptStream renews on one LeaseKeepAlive stream kept open, sending a
// request and reading its response in turn. The client's own KeepAlive
// sends on such a stream only every TTL/3, so its channel cannot show the
// rate a stream sustains.
func (c *etcdCluster) keptStream(ctx context.Context, id int64) (func(context.Context) (time.Time, error), func(), error) {
	sctx, cancel := context.WithCancel(ctx)
	stream, err := c.leases.LeaseKeepAlive(sctx)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	req := &pb.LeaseKeepAliveRequest{ID: id}
	renew := func(context.Context) (time.Time, error) {
		if err := stream.Send(req); err != nil {
			return time.Time{}, err
		}
		r, err := stream.Recv()
		if err != nil {
			return time.Time{}, err
		}
		if r.TTL <= 0 {
			return time.Time{}, fmt.Errorf("etcd lease %x: not found", id)
		}
		return time.Now().Add(time.Duration(r.TTL) * time.Second), nil
	}
	done := func() {
		_ = stream.CloseSend()
		cancel()
	}
	return renew, done, nil
}

// watchEnds watches the deletion of keys under keyPrefix and reports the
// lease each deleted key had: etcd deletes a lease's keys when it revokes
// the lease, expired or not.
func (c *etcdCluster) watchEnds(ctx context.Context, keyPrefix string, fn func(int64, time.Time)) (func(), error) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	wch := c.client.Watch(wctx, keyPrefix, clientv3.WithPrefix(), clientv3.WithFilterPut(), clientv3.WithPrevKV(), clientv3.WithCreatedNotify())
	select {
	case r, ok := <-wch:
		if !ok || !r.Created {
			cancel()
			return nil, fmt.Errorf("etcd watch on %q not created: %v", keyPrefix, r.Err())
		}
	case <-ctx.Done():
		cancel()
		return nil, context.Cause(ctx)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for r := range wch {
			at := time.Now()
			for _, ev := range r.Events {
				if ev.PrevKv != nil && ev.PrevKv.Lease != 0 {
					fn(ev.PrevKv.Lease, at)
				}
			}
		}
	})
	return func() { cancel(); wg.Wait() }, nil
}

func (c *etcdCluster) close() error {
	var errs []error
	if c.client != nil {
		errs = append(errs, c.client.Close())
	}
	for _, m := range c.members {
		m.Close()
	}
	err := errors.Join(errs...)
	if errors.Is(err, context.Canceled) {
		return nil // the client reports its own cancellation on Close
	}
	return err
}

// waitFor polls cond every 10 ms until it holds or ctx ends.
func waitFor[T any](ctx context.Context, what string, cond func() (T, bool)) (T, error) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if v, ok := cond(); ok {
			return v, nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			var zero T
			return zero, fmt.Errorf("waiting for %s: %w", what, context.Cause(ctx))
		}
	}
}
