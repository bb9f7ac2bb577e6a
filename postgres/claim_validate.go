package postgres

import (
	"fmt"
	"math"
	"strconv"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// checkNewItem checks items[i].
func checkNewItem(i int, it claim.NewItem) error {
	const op = "claims.enqueue"
	at := fmt.Sprintf("items[%d].", i)
	bad := func(field, detail string) error { return invalid(op, at+field, detail) }
	if err := checkName(op, at+"queue", it.Queue); err != nil {
		return err
	}
	if it.Key != "" {
		if err := checkName(op, at+"key", it.Key); err != nil {
			return err
		}
	}
	if err := checkTags(at, it.Tags); err != nil {
		return err
	}
	if len(it.Kind) > MaxNameLen {
		return bad("kind", fmt.Sprintf("is %d bytes, more than %d", len(it.Kind), MaxNameLen))
	}
	if err := checkText(op, "kind", it.Kind); err != nil {
		return bad("kind", err.(*lease.Error).Detail)
	}
	switch {
	case it.Delay < 0:
		return bad("delay", it.Delay.String()+" is negative")
	case it.MaxAttempts < 1 || it.MaxAttempts > math.MaxInt32:
		return bad("max_attempts", strconv.Itoa(it.MaxAttempts)+" is not between 1 and 2147483647")
	case it.Priority < 0 || it.Priority > claim.MaxPriority:
		return bad("priority", fmt.Sprintf("%d is not between 0 and %d", it.Priority, claim.MaxPriority))
	case it.Timeout < 0:
		return bad("timeout", it.Timeout.String()+" is negative")
	case it.Timeout > claim.MaxTimeout:
		// Beyond it the timeout in whole microseconds would not convert back.
		return bad("timeout", it.Timeout.String()+" is more than claim.MaxTimeout, "+claim.MaxTimeout.String())
	}
	return nil
}

func checkClaimRequest(req claim.ClaimRequest) error {
	const op = "claims.claim"
	if err := checkName(op, "queue", req.Queue); err != nil {
		return err
	}
	if err := checkName(op, "owner", req.Owner); err != nil {
		return err
	}
	switch {
	case req.Limit < 1:
		return invalid(op, "limit", strconv.Itoa(req.Limit)+" is less than 1")
	case req.Lease <= 0:
		return invalid(op, "lease_duration", req.Lease.String()+" is not positive")
	}
	return nil
}

func checkRef(op string, r claim.Ref) error {
	switch {
	case r.Item == 0 || r.Item > math.MaxInt64:
		return invalid("claims."+op, "ref", "does not name an item")
	case r.Token == 0 || r.Token > math.MaxInt64:
		return invalid("claims."+op, "ref", "has no claim token")
	}
	return nil
}

func checkSettlement(st claim.Settlement) error {
	const op = "settle"
	if err := checkRef(op, st.Ref); err != nil {
		return err
	}
	switch {
	case st.How < claim.SettleComplete || st.How > claim.SettleSnooze:
		return invalid("claims."+op, "how", st.How.String()+" is not a way to settle")
	case st.After < 0:
		return invalid("claims."+op, "after", st.After.String()+" is negative")
	}
	return checkText("claims."+op, "reason", st.Reason)
}

func checkItem(op, queue string, id claim.ItemID) error {
	if err := checkName("claims."+op, "queue", queue); err != nil {
		return err
	}
	if id == 0 || id > math.MaxInt64 {
		return invalid("claims."+op, "id", "is not an item ID")
	}
	return nil
}
