package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// itemRow is a row as claimColumns lists it.
type itemRow struct {
	id, timeout           int64
	queue                 string
	key, owner            sql.NullString
	payload               []byte
	history               string
	state, priority       int
	attempts, maxAttempts int
	enqueued, due         int64
	deadAt                sql.NullInt64
}

func (r *itemRow) dest() []any {
	return []any{&r.id, &r.queue, &r.key, &r.payload, &r.state, &r.attempts, &r.maxAttempts, &r.priority,
		&r.timeout, &r.enqueued, &r.due, &r.owner, &r.deadAt, &r.history}
}

// failureJSON is a history entry as the statements write it.
type failureJSON struct {
	Attempt int     `json:"a"`
	Owner   *string `json:"o"`
	At      int64   `json:"t"` // ns since the Unix epoch
	Reason  string  `json:"r"`
	Lost    bool    `json:"l"`
}

// item is the row as a claim.Item as of now: a claim whose lease ended
// shows as visible again or dead, with its loss in the history, as the
// next Claim will write it.
func (r *itemRow) item(now int64) (claim.Item, error) {
	it := claim.Item{
		ID: claim.ItemID(r.id), Queue: r.queue, Key: r.key.String, Payload: clonePayload(r.payload),
		Attempts: r.attempts, MaxAttempts: r.maxAttempts, Priority: r.priority,
		Timeout: time.Duration(r.timeout), EnqueuedAt: at(r.enqueued),
	}
	var hist []failureJSON
	if err := json.Unmarshal([]byte(r.history), &hist); err != nil {
		return it, fmt.Errorf("item %d: history: %w", r.id, err)
	}
	for _, f := range hist {
		x := claim.Failure{Attempt: f.Attempt, At: at(f.At), Reason: f.Reason, Lost: f.Lost}
		if f.Owner != nil {
			x.Owner = *f.Owner
		}
		it.History = append(it.History, x)
	}
	switch {
	case r.state == rowDead:
		it.State = claim.Dead
		if r.deadAt.Valid {
			it.DeadAt = at(r.deadAt.Int64)
		}
	case r.state == rowClaimed && r.due > now:
		it.State = claim.Claimed
	case r.state == rowClaimed:
		it.History = append(it.History, claim.Failure{Attempt: r.attempts, Owner: r.owner.String, At: at(r.due),
			Reason: "lease expired", Lost: true})
		if r.attempts >= r.maxAttempts {
			it.State, it.DeadAt = claim.Dead, at(r.due)
		} else {
			it.State, it.VisibleAt = claim.Visible, at(r.due)
		}
	case r.due > now:
		it.State, it.VisibleAt = claim.Delayed, at(r.due)
	default:
		it.State, it.VisibleAt = claim.Visible, at(r.due)
	}
	return it, nil
}

// checkNewItem checks items[i].
func checkNewItem(i int, it claim.NewItem) error {
	const op = "claims.enqueue"
	at := fmt.Sprintf("items[%d]: ", i)
	bad := func(field, detail string) error { return invalid(op, field, at+detail) }
	if err := checkName(op, "queue", it.Queue); err != nil {
		return bad("queue", err.(*lease.Error).Detail)
	}
	if it.Key != "" {
		if err := checkName(op, "key", it.Key); err != nil {
			return bad("key", err.(*lease.Error).Detail)
		}
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
