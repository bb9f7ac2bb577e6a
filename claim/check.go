package claim

import (
	"context"
	"strconv"
	"time"
)

// The checks of a Store's input, which Memory applies and the Broker
// applies before it calls any store. Each names the offending field.

func checkContext(ctx context.Context, op string) error {
	if ctx == nil {
		return invalid(op, "ctx", "must not be nil")
	}
	return ctx.Err()
}

// checkItem checks the fields of an item to enqueue, naming them with
// prefix ("" for Broker.Enqueue, "items[i]." for a batch).
func checkItem(prefix string, n *NewItem) error {
	const op = "enqueue"
	switch {
	case n.Queue == "":
		return invalid(op, prefix+"queue", "must not be empty")
	case n.Delay < 0:
		return invalid(op, prefix+"delay", n.Delay.String()+" is negative")
	case n.MaxAttempts < 1:
		return invalid(op, prefix+"max_attempts", strconv.Itoa(n.MaxAttempts)+" is less than 1")
	case n.Priority < 0 || n.Priority > MaxPriority:
		return invalid(op, prefix+"priority", strconv.Itoa(n.Priority)+" is not between 0 and "+strconv.Itoa(MaxPriority))
	case n.Timeout < 0:
		return invalid(op, prefix+"timeout", n.Timeout.String()+" is negative")
	case n.Timeout > MaxTimeout:
		return invalid(op, prefix+"timeout", n.Timeout.String()+" is more than MaxTimeout, "+MaxTimeout.String())
	}
	if err := checkKeyStates(op, prefix, n); err != nil {
		return err
	}
	return checkTags(op, prefix, n.Tags)
}

// checkKeyStates checks n.KeyStates: states, and only with a key.
func checkKeyStates(op, prefix string, n *NewItem) error {
	if len(n.KeyStates) > 0 && n.Key == "" {
		return invalid(op, prefix+"key_states", "are set without a key")
	}
	for i, st := range n.KeyStates {
		if !st.valid() {
			return invalid(op, prefix+"key_states["+strconv.Itoa(i)+"]", st.String()+" is not a state")
		}
	}
	return nil
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
	switch {
	case queue == "":
		return invalid("claim", "queue", "must not be empty")
	case owner == "":
		return invalid("claim", "owner", "must not be empty")
	case limit < 1:
		return invalid("claim", "limit", strconv.Itoa(limit)+" is less than 1")
	case d <= 0:
		return invalid("claim", "lease_duration", d.String()+" is not positive")
	}
	return nil
}

func checkRef(ctx context.Context, op string, r Ref) error {
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	if r.Token == 0 {
		return invalid(op, "ref", "is the zero Ref")
	}
	return nil
}

func checkSettlement(ctx context.Context, s Settlement) error {
	const op = "settle"
	if err := checkRef(ctx, op, s.Ref); err != nil {
		return err
	}
	switch {
	case s.How < SettleComplete || s.How > SettleSnooze:
		return invalid(op, "how", s.How.String()+" is not a way to settle")
	case s.After < 0:
		return invalid(op, "after", s.After.String()+" is negative")
	}
	return nil
}

func checkQuery(ctx context.Context, q Query) error {
	const op = "list"
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	switch {
	case q.Queue == "":
		return invalid(op, "queue", "must not be empty")
	case q.State > Cancelled:
		return invalid(op, "state", q.State.String()+" is not a state")
	case q.Limit < 1:
		return invalid(op, "limit", strconv.Itoa(q.Limit)+" is less than 1")
	}
	return nil
}

// checkQueue checks the context and queue of an operation on one queue.
func checkQueue(ctx context.Context, op, queue string) error {
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	if queue == "" {
		return invalid(op, "queue", "must not be empty")
	}
	return nil
}
