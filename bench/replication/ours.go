package replication

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/replicated"
)

// oursCluster is three replicated.Node in this process, over raft's TCP
// transport on 127.0.0.1. Clients call the leader's methods directly.
type oursCluster struct {
	nodes      []*replicated.Node
	transports []*raft.NetworkTransport
	leader     *replicated.Node
}

// holder names the bench's leases.
const holder = "bench"

// startOurs opens a 3-node cluster with each node's data under dir, at the
// defaults of the package and of raft (its log quieted to errors), and
// waits for a leader.
func startOurs(ctx context.Context, dir string) (system, error) {
	const n = 3
	c := &oursCluster{}
	var servers []replicated.Server
	for i := range n {
		t, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, 10*time.Second, io.Discard)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("raft transport: %w", err)
		}
		c.transports = append(c.transports, t)
		servers = append(servers, replicated.Server{ID: "n" + strconv.Itoa(i+1), Address: string(t.LocalAddr())})
	}
	for i, s := range servers {
		rc := raft.DefaultConfig()
		rc.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft " + s.ID, Level: hclog.Error, Output: os.Stderr})
		node, err := replicated.Open(ctx, replicated.Config{
			ID:        s.ID,
			Dir:       filepath.Join(dir, s.ID),
			Transport: c.transports[i],
			Bootstrap: servers,
			Raft:      rc,
		})
		if err != nil {
			c.close()
			return nil, fmt.Errorf("opening node %s: %w", s.ID, err)
		}
		c.nodes = append(c.nodes, node)
	}
	// A node may know it leads a moment before it serves writes: wait for
	// one that grants.
	leader, err := waitFor(ctx, "a raft leader that grants", func() (*replicated.Node, bool) {
		for i, node := range c.nodes {
			if id, _ := node.Leader(); id != servers[i].ID {
				continue
			}
			l, err := node.Grant(ctx, holder, lease.Operation, time.Second)
			if err == nil {
				_, err = node.Revoke(ctx, l.ID)
			}
			return node, err == nil
		}
		return nil, false
	})
	if err != nil {
		c.close()
		return nil, err
	}
	c.leader = leader
	return c, nil
}

func (c *oursCluster) grant(ctx context.Context, ttl time.Duration) (grant, error) {
	l, err := c.leader.Grant(ctx, holder, lease.Operation, ttl)
	return grant{id: int64(l.ID), deadline: l.ExpiresAt}, err
}

func (c *oursCluster) grantKey(ctx context.Context, ttl time.Duration, key string, value []byte) (grant, error) {
	l, err := c.leader.GrantWithKey(ctx, holder, lease.Operation, ttl, key, value)
	return grant{id: int64(l.ID), deadline: l.ExpiresAt}, err
}

func (c *oursCluster) put(ctx context.Context, key string, value []byte, id int64) error {
	return c.leader.Put(ctx, key, value, lease.ID(id))
}

func (c *oursCluster) revoke(ctx context.Context, id int64) error {
	_, err := c.leader.Revoke(ctx, lease.ID(id))
	return err
}

func (c *oursCluster) exactTTL() bool { return true }

func (c *oursCluster) renewers() []renewer {
	return []renewer{{name: "Renew", open: c.openRenew}}
}

func (c *oursCluster) openRenew(_ context.Context, id int64) (func(context.Context) (time.Time, error), func(), error) {
	renew := func(ctx context.Context) (time.Time, error) {
		l, err := c.leader.Renew(ctx, lease.ID(id))
		return l.ExpiresAt, err
	}
	return renew, func() {}, nil
}

// watchEnds reports the leases the leader ends by expiry, from its OnEnd.
func (c *oursCluster) watchEnds(_ context.Context, _ string, fn func(int64, time.Time)) (func(), error) {
	stop := c.leader.OnEnd(func(l lease.Lease, why lease.EndReason) {
		if why == lease.EndExpired {
			fn(int64(l.ID), time.Now())
		}
	})
	return stop, nil
}

func (c *oursCluster) close() error {
	var errs []error
	for _, node := range c.nodes {
		errs = append(errs, node.Close())
	}
	for _, t := range c.transports {
		t.CloseStreams() // closing our connections ends the peers' handlers of them
		errs = append(errs, t.Close())
	}
	return errors.Join(errs...)
}
