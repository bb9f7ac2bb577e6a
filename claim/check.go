package claim

import (
	"context"
	"time"

	"github.com/leasehold/lease/claim/claimstore"
)

// A Store checks its own input (claimstore.Checker), once, whichever door
// it came through; the Broker checks only what no store sees: a nil
// context, the arguments of its own policy (backoff delays, options), and
// what it must read before it calls the store. Memory checks its input as
// claimstore's contract says, naming its errors "claim".

// checks are Memory's checks: the contract's, with no limits of its own.
var checks = claimstore.Checker{Package: "claim"}

func checkContext(ctx context.Context, op string) error {
	if ctx == nil {
		return invalid(op, "ctx", "must not be nil")
	}
	return ctx.Err()
}

// checkItem checks the fields of an item to enqueue, naming them with
// prefix ("" for Broker.Enqueue, "items[i]." for a batch).
func checkItem(prefix string, n *NewItem) error {
	return checks.NewItemNamed("enqueue", prefix, *n)
}

// checkNewItem checks items[i] of a batch.
func checkNewItem(items []NewItem, i int) error {
	return checks.NewItem("enqueue", i, items[i])
}

func checkClaimRequest(ctx context.Context, req ClaimRequest) error {
	if err := checkContext(ctx, "claim"); err != nil {
		return err
	}
	return checks.ClaimRequest("claim", req)
}

func checkExtend(ctx context.Context, op string, r Ref, d time.Duration) error {
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return checks.Extend(op, r, d)
}

// checkLimit checks the context and the limit of a page or a batch.
func checkLimit(ctx context.Context, op string, limit int) error {
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return checks.Limit(op, limit)
}

func checkSettlement(ctx context.Context, s Settlement) error {
	const op = "settle"
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return checks.Settlement(op, s)
}

func checkQuery(ctx context.Context, q Query) error {
	const op = "list"
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return checks.Query(op, q)
}

// checkQueue checks the context and queue of an operation on one queue.
func checkQueue(ctx context.Context, op, queue string) error {
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return checks.Name(op, "queue", queue)
}

func checkQueueQuery(ctx context.Context, q QueueQuery) error {
	const op = "queues"
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return checks.QueueQuery(op, q)
}
