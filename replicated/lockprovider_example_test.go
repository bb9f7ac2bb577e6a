package replicated_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/leasehold/lease/lock/election"
	"github.com/leasehold/lease/replicated"
)

// Three replicas of a service, each embedding a node of one cluster, elect
// a leader with no other database: each campaigns through its own node,
// the second waits until the first resigns, and every node names the same
// leader. (In production each node runs on its own machine, with mutual
// TLS; plain TCP on loopback keeps the example short.)
func Example_lockOnCluster() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "replicated-locks")
	if err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()

	var servers []replicated.Server
	for i := range 3 {
		servers = append(servers, replicated.Server{ID: fmt.Sprintf("node%d", i), Address: loopbackAddr()})
	}
	var nodes []*replicated.Node
	for _, s := range servers {
		rc := raft.DefaultConfig()
		rc.Logger = hclog.NewNullLogger()
		node, err := replicated.Open(ctx, replicated.Config{
			ID: s.ID, Dir: filepath.Join(dir, s.ID), Bind: s.Address, Insecure: true,
			Bootstrap: servers, Raft: rc,
		})
		if err != nil {
			panic(err)
		}
		defer func() { _ = node.Close() }()
		nodes = append(nodes, node)
	}
	var elections []*election.Election
	for _, node := range nodes {
		if err := node.Ready(ctx); err != nil { // a leader is elected, or known
			panic(err)
		}
		// The replica's locks, kept by the cluster through its own node.
		locks, err := replicated.NewLockProvider(node)
		if err != nil {
			panic(err)
		}
		el, err := election.New(locks, "scheduler")
		if err != nil {
			panic(err)
		}
		elections = append(elections, el)
	}

	first, err := elections[0].Campaign(ctx, []byte("replica-0:8080"))
	if err != nil {
		panic(err)
	}
	won := make(chan *election.Leadership)
	go func() {
		next, err := elections[1].Campaign(ctx, []byte("replica-1:8080"))
		if err != nil {
			panic(err)
		}
		won <- next
	}()
	leader, err := elections[2].Leader(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("replica-2 sees the leader: %s\n", leader.Value)

	// Work as leader runs under first.Context() and passes first.Token()
	// to what it writes, so that a lock.Fence refuses it once it is stale.
	if err := first.Resign(ctx); err != nil {
		panic(err)
	}
	next := <-won
	defer func() { _ = next.Resign(ctx) }()
	leader, err = elections[2].Leader(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("replica-2 sees the leader: %s, token greater: %t\n", leader.Value, next.Token() > first.Token())
	// Output:
	// replica-2 sees the leader: replica-0:8080
	// replica-2 sees the leader: replica-1:8080, token greater: true
}

// loopbackAddr returns a TCP address on loopback that was free a moment ago.
func loopbackAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}
