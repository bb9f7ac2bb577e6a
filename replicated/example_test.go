package replicated_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/replicated"
)

// ExampleOpen runs a three-node cluster in one process, on TCP over
// loopback; in production each node runs on its own machine with its own
// Bind address and Dir.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "replicated-example")
	if err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()

	// Transports first, so that every node knows the others' addresses.
	var (
		transports []*raft.NetworkTransport
		servers    []replicated.Server
	)
	for i := range 3 {
		tr, err := raft.NewTCPTransportWithLogger("127.0.0.1:0", nil, 3, 10*time.Second, hclog.NewNullLogger())
		if err != nil {
			panic(err)
		}
		transports = append(transports, tr)
		servers = append(servers, replicated.Server{ID: fmt.Sprintf("node%d", i), Address: string(tr.LocalAddr())})
	}
	var nodes []*replicated.Node
	for i, tr := range transports {
		rc := raft.DefaultConfig()
		rc.Logger = hclog.NewNullLogger()
		n, err := replicated.Open(ctx, replicated.Config{
			ID:        servers[i].ID,
			Dir:       filepath.Join(dir, servers[i].ID),
			Transport: tr,
			Bootstrap: servers,
			Raft:      rc,
		})
		if err != nil {
			panic(err)
		}
		nodes = append(nodes, n)
	}
	defer func() {
		for i, n := range nodes {
			_ = n.Close()
			transports[i].CloseStreams()
			_ = transports[i].Close()
		}
	}()
	leader := awaitLeader(nodes)

	// Writes go to the leader, which commits them to a majority.
	l, err := leader.GrantWithKey(ctx, "worker-1", lease.Operation, time.Minute, "jobs/42", []byte("running"))
	if err != nil {
		panic(err)
	}
	stop := leader.OnEnd(func(l lease.Lease, reason lease.EndReason) {
		fmt.Println("ended:", l.ID, reason, l.Keys)
	})
	defer stop()

	// A follower refuses writes and names the leader.
	var follower *replicated.Node
	for _, n := range nodes {
		if n != leader {
			follower = n
			break
		}
	}
	_, err = follower.Renew(ctx, l.ID)
	var nle *replicated.NotLeaderError
	if errors.As(err, &nle) {
		id, _ := leader.Leader()
		fmt.Println("the follower names the leader:", nle.LeaderID == id)
	}

	// Reads are linearizable on the leader; Stale reads any node's state.
	value, holder, ok, err := leader.Get(ctx, "jobs/42")
	if err != nil {
		panic(err)
	}
	fmt.Println(string(value), holder == l.ID, ok)

	// Revoking ends the lease and deletes its key on every node.
	if _, err := leader.Revoke(ctx, l.ID); err != nil {
		panic(err)
	}
	// Output:
	// the follower names the leader: true
	// running true true
	// ended: 1 revoked [jobs/42]
}

// awaitLeader waits until one of nodes leads, on raft's leadership signal.
func awaitLeader(nodes []*replicated.Node) *replicated.Node {
	for {
		for _, n := range nodes {
			if n.Raft().State() == raft.Leader {
				return n
			}
		}
		select {
		case <-nodes[0].Raft().LeaderCh():
		case <-nodes[1].Raft().LeaderCh():
		case <-nodes[2].Raft().LeaderCh():
		}
	}
}

// A single node is a durable embedded service: every change is in the
// bolt log in Dir before it is acknowledged, and a node reopened on the
// same Dir has every lease and key it acknowledged.
func Example_singleNode() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "replicated-solo")
	if err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()

	_, tr := raft.NewInmemTransport("solo")
	node, err := replicated.Open(ctx, replicated.Config{
		ID: "solo", Dir: dir, Transport: tr,
		Bootstrap: []replicated.Server{{ID: "solo", Address: "solo"}},
	})
	if err != nil {
		panic(err)
	}
	err = node.Ready(ctx) // it elects itself a moment after Open
	if err != nil {
		panic(err)
	}
	l, err := node.Grant(ctx, "worker-1", lease.StateWrite, time.Hour)
	if err != nil {
		panic(err)
	}
	fmt.Println("granted lease", l.ID)
	_ = node.Close()
	_ = tr.Close()

	// Reopened on the same Dir: the lease is there.
	_, tr = raft.NewInmemTransport("solo")
	defer func() { _ = tr.Close() }()
	node, err = replicated.Open(ctx, replicated.Config{ID: "solo", Dir: dir, Transport: tr})
	if err != nil {
		panic(err)
	}
	defer func() { _ = node.Close() }()
	if err := node.Ready(ctx); err != nil {
		panic(err)
	}
	got, err := node.Info(ctx, l.ID)
	fmt.Println("after a restart:", got.Holder, err)
	// Output:
	// granted lease 1
	// after a restart: worker-1 <nil>
}
