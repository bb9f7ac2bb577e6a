package claim

import (
	"context"
	"strconv"
	"time"

	"github.com/leasehold/lease/internal/claimkit"
	"github.com/leasehold/lease/internal/inputcheck"
)

// The checks of a Store's input, which Memory applies and the Broker
// applies before it calls any store. Each names the offending field. They
// are the checks package claim/claimstore gives other stores
// (internal/claimkit), with no limits of a store's own.

// limits are this package's limits on an item, which every store applies.
var limits = claimkit.Limits{MaxPriority: MaxPriority, MaxTimeout: MaxTimeout, MaxTags: MaxTags, MaxTagLen: MaxTagLen, MaxState: int(Cancelled)}

// checks raises this package's errors.
var checks = claimkit.Checker{Names: inputcheck.Names{Package: "claim"}, Limits: limits}

func checkContext(ctx context.Context, op string) error {
	if ctx == nil {
		return invalid(op, "ctx", "must not be nil")
	}
	return ctx.Err()
}

// kitItem is what the checks read of n.
func kitItem(n *NewItem) claimkit.Item {
	return claimkit.Item{Queue: n.Queue, Key: n.Key, Kind: n.Kind, Tags: n.Tags, Delay: n.Delay, Timeout: n.Timeout,
		MaxAttempts: n.MaxAttempts, Priority: n.Priority, KeyStates: claimkit.States(n.KeyStates)}
}

// checkItem checks the fields of an item to enqueue, naming them with
// prefix ("" for Broker.Enqueue, "items[i]." for a batch).
func checkItem(prefix string, n *NewItem) error {
	return checks.Item("enqueue", prefix, kitItem(n))
}

// checkNewItem checks items[i] of a batch.
func checkNewItem(items []NewItem, i int) error {
	return checkItem("items["+strconv.Itoa(i)+"].", &items[i])
}

func checkClaimRequest(ctx context.Context, req ClaimRequest) error {
	return checkClaimArgs(ctx, req.Queue, req.Owner, req.Limit, req.Lease)
}

func checkClaimArgs(ctx context.Context, queue, owner string, limit int, d time.Duration) error {
	if err := checkContext(ctx, "claim"); err != nil {
		return err
	}
	return checks.Claim("claim", queue, owner, limit, d)
}

func checkExtend(ctx context.Context, op string, r Ref, d time.Duration) error {
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return checks.Extend(op, uint64(r.Item), r.Token, d)
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
	return checks.Settlement(op, uint64(s.Ref.Item), s.Ref.Token, s.How, s.How >= SettleComplete && s.How <= SettleSnooze, s.After, s.Reason)
}

func checkQuery(ctx context.Context, q Query) error {
	const op = "list"
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return checks.Query(op, q.Queue, q.State, q.State <= Cancelled, q.Limit, q.Kind, q.Tag)
}

// checkQueue checks the context and queue of an operation on one queue.
func checkQueue(ctx context.Context, op, queue string) error {
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return checks.Name(op, "queue", queue)
}
