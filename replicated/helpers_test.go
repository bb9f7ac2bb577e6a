package replicated

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// waitLimit bounds every wait of the tests: a wait that reaches it fails
// the test instead of hanging it.
const waitLimit = 15 * time.Second

// testRaftConfig is raft tuned for a cluster in one process: short
// timeouts, so that an election takes tens of milliseconds.
func testRaftConfig() *raft.Config {
	c := raft.DefaultConfig()
	c.HeartbeatTimeout = 50 * time.Millisecond
	c.ElectionTimeout = 50 * time.Millisecond
	c.LeaderLeaseTimeout = 50 * time.Millisecond
	c.CommitTimeout = 5 * time.Millisecond
	c.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Off})
	return c
}

// patientRaft lengthens raft's timeouts for tests that need one leader to
// stay in place between two steps on a loaded machine, where 50 ms
// without a heartbeat is common.
func patientRaft(c *raft.Config) {
	c.HeartbeatTimeout = 400 * time.Millisecond
	c.ElectionTimeout = 400 * time.Millisecond
	c.LeaderLeaseTimeout = 200 * time.Millisecond
}

type storeKind int

const (
	memStores storeKind = iota
	boltStores
)

type transportKind int

const (
	inmemTransport transportKind = iota
	tcpTransport
)

// cluster is a cluster of nodes in the test process.
type cluster struct {
	t     testing.TB
	nodes []*Node // nil for a node that is down
	cfgs  []Config
	inmem []*raft.InmemTransport
	mem   []memStore

	mu      sync.Mutex
	changed chan struct{} // closed when a node's term becomes ready or ends
}

type memStore struct {
	store *raft.InmemStore
	snaps *raft.FileSnapshotStore
}

type clusterOpts struct {
	size      int
	stores    storeKind
	transport transportKind
	raft      func(*raft.Config)
	options   []lease.Option
	// dirs and binds, when set, are the nodes' directories and TCP
	// addresses (for a cluster reopened from directories another cluster
	// or process left behind); otherwise each node gets fresh ones.
	dirs, binds []string
	// insecure runs a TCP cluster on plain TCP instead of mutual TLS.
	insecure bool
	// wrapLog, when set with memStores, wraps node i's log store.
	wrapLog func(i int, s raft.LogStore) raft.LogStore
	// onServe, when set, is every node's Config.onServe.
	onServe func(n *Node, kind byte, body []byte)
}

func newCluster(t testing.TB, o clusterOpts) *cluster {
	t.Helper()
	if o.size == 0 {
		o.size = 3
	}
	c := &cluster{t: t, changed: make(chan struct{})}
	var servers []Server
	for i := range o.size {
		id := fmt.Sprintf("n%d", i)
		dir := t.TempDir()
		if o.dirs != nil {
			dir = o.dirs[i]
		}
		cfg := Config{ID: id, Dir: dir, Options: o.options, onTerm: c.notify, onServe: o.onServe}
		rc := testRaftConfig()
		if o.raft != nil {
			o.raft(rc)
		}
		cfg.Raft = rc
		switch o.transport {
		case inmemTransport:
			addr, tr := raft.NewInmemTransport(raft.ServerAddress(id))
			c.inmem = append(c.inmem, tr)
			cfg.Transport = tr
			servers = append(servers, Server{ID: id, Address: string(addr)})
		case tcpTransport:
			cfg.Bind = freeAddr(t)
			if o.binds != nil {
				cfg.Bind = o.binds[i]
			}
			servers = append(servers, Server{ID: id, Address: cfg.Bind})
			if o.insecure {
				cfg.Insecure = true
			} else {
				cfg.TLS = clusterCA().config(t, id)
			}
		}
		if o.stores == memStores {
			// raft's in-memory snapshot store races a snapshot being
			// written with one being sent: snapshots go to files.
			snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, hclog.NewNullLogger())
			require.NoError(t, err)
			ms := memStore{store: raft.NewInmemStore(), snaps: snaps}
			c.mem = append(c.mem, ms)
			var logs raft.LogStore = ms.store
			if o.wrapLog != nil {
				logs = o.wrapLog(i, ms.store)
			}
			cfg.stores = func() (raft.LogStore, raft.StableStore, raft.SnapshotStore) {
				return logs, ms.store, ms.snaps
			}
		}
		c.cfgs = append(c.cfgs, cfg)
	}
	for i := range c.inmem {
		for j := range c.inmem {
			if i != j {
				c.inmem[i].Connect(c.inmem[j].LocalAddr(), c.inmem[j])
			}
		}
	}
	for i := range c.cfgs {
		c.cfgs[i].Bootstrap = servers
	}
	c.nodes = make([]*Node, o.size)
	for i := range c.cfgs {
		c.start(i)
	}
	t.Cleanup(c.close)
	return c
}

// handedOut holds every address freeAddr has returned in this process: the
// kernel often gives a just-closed port to the next listener, so two nodes of
// one cluster could otherwise be handed the same address.
var handedOut struct {
	sync.Mutex
	addrs map[string]bool
}

// freeAddr returns a TCP address on 127.0.0.1 that was free a moment ago and
// that it has not returned before in this process.
func freeAddr(t testing.TB) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.addrs == nil {
		handedOut.addrs = make(map[string]bool)
	}
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr
		}
	}
}

func (c *cluster) notify() {
	c.mu.Lock()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// changes returns a channel closed at the next change of a term.
func (c *cluster) changes() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// start opens node i (again).
func (c *cluster) start(i int) {
	c.t.Helper()
	n, err := Open(context.Background(), c.cfgs[i])
	require.NoError(c.t, err)
	c.mu.Lock()
	c.nodes[i] = n
	c.mu.Unlock()
}

// stop closes node i.
func (c *cluster) stop(i int) {
	c.t.Helper()
	c.mu.Lock()
	n := c.nodes[i]
	c.nodes[i] = nil
	c.mu.Unlock()
	require.NoError(c.t, n.Close())
}

// node returns node i, nil when it is down; for goroutines racing stop.
func (c *cluster) node(i int) *Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[i]
}

func (c *cluster) close() {
	for i := range c.nodes {
		c.mu.Lock()
		n := c.nodes[i]
		c.nodes[i] = nil
		c.mu.Unlock()
		if n != nil {
			_ = n.Close()
		}
	}
	for _, tr := range c.inmem {
		_ = tr.Close()
	}
}

// leader waits until one running node leads a ready term, and returns its
// index.
func (c *cluster) leader() int {
	c.t.Helper()
	deadline := time.After(waitLimit)
	for {
		changed := c.changes()
		if i := c.leading(); i >= 0 {
			return i
		}
		select {
		case <-changed:
		case <-deadline:
			c.t.Fatal("no leader")
		}
	}
}

// leading returns the node that leads a ready term, or -1.
func (c *cluster) leading() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, n := range c.nodes {
		if n == nil {
			continue
		}
		if t := n.term.Load(); t != nil && n.raft.State() == raft.Leader {
			select {
			case <-t.ready:
				return i
			default:
			}
		}
	}
	return -1
}

// leaderOtherThan waits for a leader that is not node old.
func (c *cluster) leaderOtherThan(old int) int {
	c.t.Helper()
	deadline := time.After(waitLimit)
	for {
		changed := c.changes()
		if l := c.leader(); l != old {
			return l
		}
		select {
		case <-changed:
		case <-deadline:
			c.t.Fatal("the leader did not change")
		}
	}
}

// caughtUp waits until node i has applied everything node leader has.
func (c *cluster) caughtUp(i, leader int) {
	c.t.Helper()
	l := c.nodes[leader].fsm
	l.mu.Lock()
	idx := l.applied
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(c.t, c.nodes[i].fsm.waitApplied(ctx, "test", idx, c.nodes[i].closing))
}

// disconnect cuts node i off from every other node (inmem transport).
func (c *cluster) disconnect(i int) {
	for j := range c.inmem {
		if j != i {
			c.inmem[i].Disconnect(c.inmem[j].LocalAddr())
			c.inmem[j].Disconnect(c.inmem[i].LocalAddr())
		}
	}
}

// reconnect joins node i to every other node again.
func (c *cluster) reconnect(i int) {
	for j := range c.inmem {
		if j != i {
			c.inmem[i].Connect(c.inmem[j].LocalAddr(), c.inmem[j])
			c.inmem[j].Connect(c.inmem[i].LocalAddr(), c.inmem[i])
		}
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// endings collects the endings a node applies.
type endings struct {
	ch   chan ending
	stop func()
}

type ending struct {
	l      lease.Lease
	reason lease.EndReason
	at     time.Time // real time the node applied it
}

func watchEnds(n *Node) *endings {
	e := &endings{ch: make(chan ending, 10000)}
	e.stop = n.OnEnd(func(l lease.Lease, r lease.EndReason) {
		select {
		case e.ch <- ending{l: l, reason: r, at: time.Now()}:
		default:
		}
	})
	return e
}

// next waits for the next ending.
func (e *endings) next(t testing.TB) ending {
	t.Helper()
	select {
	case x := <-e.ch:
		return x
	case <-time.After(waitLimit):
		t.Fatal("no lease ended")
		return ending{}
	}
}
