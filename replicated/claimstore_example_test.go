package replicated_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/raft"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/replicated"
)

// ExampleNewClaimStore runs a work queue on a node with no database: here
// a single node, which keeps the queue in its bolt log; on a cluster every
// node holds it, and a store on a follower forwards its calls.
func ExampleNewClaimStore() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "replicated-queue")
	if err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	_, tr := raft.NewInmemTransport("solo")
	defer func() { _ = tr.Close() }()
	node, err := replicated.Open(ctx, replicated.Config{
		ID: "solo", Dir: dir, Transport: tr,
		Bootstrap: []replicated.Server{{ID: "solo", Address: "solo"}},
	})
	if err != nil {
		panic(err)
	}
	defer func() { _ = node.Close() }()
	if err := node.Ready(ctx); err != nil {
		panic(err)
	}

	store, err := replicated.NewClaimStore(node)
	if err != nil {
		panic(err)
	}
	broker := lease.Must(claim.New(store)) // the Broker owns the store
	defer func() { _ = broker.Close() }()

	for _, to := range []string{"alice", "bob"} {
		if _, err := broker.Enqueue(ctx, "emails", []byte("welcome "+to)); err != nil {
			panic(err)
		}
	}
	claims, err := broker.Claim(ctx, "emails", "worker-1", 10, 30*time.Second)
	if err != nil {
		panic(err)
	}
	for _, c := range claims {
		fmt.Printf("claimed %q, token %d\n", c.Payload, c.Ref.Token)
		if err := broker.Complete(ctx, c); err != nil {
			panic(err)
		}
	}
	counts, err := broker.Counts(ctx, "emails")
	fmt.Printf("%+v %v\n", counts, err)
	// Output:
	// claimed "welcome alice", token 1
	// claimed "welcome bob", token 2
	// {Visible:0 Delayed:0 Claimed:0 Dead:0 Completed:0 Cancelled:0} <nil>
}
