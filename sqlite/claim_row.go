package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
)

// itemRow is a row as claimColumns lists it.
type itemRow struct {
	id, timeout           int64
	queue, kind           string
	key, owner            sql.NullString
	payload, metadata     []byte
	history, tags         string
	state, priority       int
	attempts, maxAttempts int
	enqueued, due         int64
	deadAt, finishedAt    sql.NullInt64
}

func (r *itemRow) dest() []any {
	return []any{&r.id, &r.queue, &r.kind, &r.key, &r.payload, &r.state, &r.attempts, &r.maxAttempts, &r.priority,
		&r.timeout, &r.enqueued, &r.due, &r.owner, &r.deadAt, &r.finishedAt, &r.history, &r.tags, &r.metadata}
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
		ID: claim.ItemID(r.id), Queue: r.queue, Kind: r.kind, Key: r.key.String, Payload: clonePayload(r.payload),
		Metadata: clonePayload(r.metadata), Attempts: r.attempts, MaxAttempts: r.maxAttempts, Priority: r.priority,
		Timeout: time.Duration(r.timeout), EnqueuedAt: at(r.enqueued),
	}
	tags, err := claimstore.ParseTagsJSON(r.tags)
	if err != nil {
		return it, fmt.Errorf("item %d: %w", r.id, err)
	}
	it.Tags = tags
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
	case r.state == rowCompleted || r.state == rowCancelled:
		it.State = claim.Completed
		if r.state == rowCancelled {
			it.State = claim.Cancelled
		}
		if r.finishedAt.Valid {
			it.FinishedAt = at(r.finishedAt.Int64)
		}
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
