package postgres

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
)

// itemRow is a row as claimColumns lists it.
type itemRow struct {
	id, timeout           int64
	queue, kind, tags     string
	key, owner            *string
	payload, history      []byte
	metadata              []byte
	state, priority       int16
	attempts, maxAttempts int32
	enqueued, due, now    time.Time
	deadAt, finishedAt    *time.Time
}

func (r *itemRow) dest() []any {
	return []any{&r.id, &r.queue, &r.kind, &r.key, &r.payload, &r.state, &r.attempts, &r.maxAttempts, &r.priority,
		&r.timeout, &r.enqueued, &r.due, &r.owner, &r.deadAt, &r.finishedAt, &r.history, &r.tags, &r.metadata, &r.now}
}

// failureJSON is a history entry as the statements write it.
type failureJSON struct {
	Attempt int     `json:"a"`
	Owner   *string `json:"o"`
	At      int64   `json:"t"` // µs since the Unix epoch
	Reason  string  `json:"r"`
	Lost    bool    `json:"l"`
}

// item is the row as a claim.Item as of r.now: a claim whose lease expired
// shows as visible again or dead, with its loss in the history, as the
// next Claim will write it.
func (r *itemRow) item() (claim.Item, error) {
	it := claim.Item{
		ID: claim.ItemID(r.id), Queue: r.queue, Kind: r.kind, Payload: r.payload,
		Attempts: int(r.attempts), MaxAttempts: int(r.maxAttempts), Priority: int(r.priority),
		Timeout: time.Duration(r.timeout) * time.Microsecond, EnqueuedAt: r.enqueued,
	}
	it.Metadata = r.metadata
	r.payload, r.metadata = nil, nil // the next row gets its own
	tags, err := claimstore.ParseTagsJSON(r.tags)
	if err != nil {
		return it, fmt.Errorf("item %d: %w", r.id, err)
	}
	it.Tags = tags
	if r.key != nil {
		it.Key = *r.key
	}
	var hist []failureJSON
	if err := json.Unmarshal(r.history, &hist); err != nil {
		return it, fmt.Errorf("item %d: history: %w", r.id, err)
	}
	for _, f := range hist {
		it.History = append(it.History, f.failure())
	}
	switch {
	case r.state == rowCompleted || r.state == rowCancelled:
		it.State = claim.Completed
		if r.state == rowCancelled {
			it.State = claim.Cancelled
		}
		if r.finishedAt != nil {
			it.FinishedAt = *r.finishedAt
		}
	case r.state == rowDead:
		it.State = claim.Dead
		if r.deadAt != nil {
			it.DeadAt = *r.deadAt
		}
	case r.state == rowClaimed && r.due.After(r.now):
		it.State = claim.Claimed
	case r.state == rowClaimed:
		owner := ""
		if r.owner != nil {
			owner = *r.owner
		}
		it.History = append(it.History, claim.Failure{Attempt: int(r.attempts), Owner: owner, At: r.due,
			Reason: "lease expired", Lost: true})
		if r.attempts >= r.maxAttempts {
			it.State, it.DeadAt = claim.Dead, r.due
		} else {
			it.State, it.VisibleAt = claim.Visible, r.due
		}
	case r.due.After(r.now):
		it.State, it.VisibleAt = claim.Delayed, r.due
	default:
		it.State, it.VisibleAt = claim.Visible, r.due
	}
	return it, nil
}

func (f failureJSON) failure() claim.Failure {
	x := claim.Failure{Attempt: f.Attempt, At: time.UnixMicro(f.At), Reason: f.Reason, Lost: f.Lost}
	if f.Owner != nil {
		x.Owner = *f.Owner
	}
	return x
}
