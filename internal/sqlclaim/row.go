package sqlclaim

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
)

// The values of the state column. A waiting item is visible or delayed as
// its due time says; a claimed item whose due time (its lease's end)
// passed is claimable again, or dead if that claim was its last attempt,
// without anyone writing it so: every statement reads the row that way, and
// the next Claim to come across it writes it.
const (
	RowWaiting   = 1
	RowClaimed   = 3
	RowDead      = 4
	RowCompleted = 5 // kept for its retention
	RowCancelled = 6 // likewise
)

// Row is an item's row as a dialect read it, in Go's types: a zero time
// or "" for a NULL column.
type Row struct {
	ID                    int64
	Queue, Kind, Key      string
	Owner                 string
	Payload, Metadata     []byte
	History               []byte // JSON: a list of failures
	Tags                  string // JSON, as claimstore.TagsJSON writes them
	State, Priority       int
	Attempts, MaxAttempts int
	Timeout               time.Duration
	Enqueued, Due         time.Time
	DeadAt, FinishedAt    time.Time
}

// failureJSON is a history entry as the statements write it.
type failureJSON struct {
	Attempt int     `json:"a"`
	Owner   *string `json:"o"`
	At      int64   `json:"t"`
	Reason  string  `json:"r"`
	Lost    bool    `json:"l"`
}

// Item is the row as a claim.Item as of now: a claim whose lease ended
// shows as visible again or dead, with its loss in the history, as the
// next Claim will write it. at reads the instants of the history, in the
// dialect's unit. The item holds r's slices.
func (r *Row) Item(now time.Time, at func(int64) time.Time) (claim.Item, error) {
	it := claim.Item{
		ID: claim.ItemID(r.ID), Queue: r.Queue, Kind: r.Kind, Key: r.Key, Payload: r.Payload,
		Metadata: r.Metadata, Attempts: r.Attempts, MaxAttempts: r.MaxAttempts, Priority: r.Priority,
		Timeout: r.Timeout, EnqueuedAt: r.Enqueued,
	}
	tags, err := claimstore.ParseTagsJSON(r.Tags)
	if err != nil {
		return it, fmt.Errorf("item %d: %w", r.ID, err)
	}
	it.Tags = tags
	var hist []failureJSON
	if err := json.Unmarshal(r.History, &hist); err != nil {
		return it, fmt.Errorf("item %d: history: %w", r.ID, err)
	}
	for _, f := range hist {
		x := claim.Failure{Attempt: f.Attempt, At: at(f.At), Reason: f.Reason, Lost: f.Lost}
		if f.Owner != nil {
			x.Owner = *f.Owner
		}
		it.History = append(it.History, x)
	}
	switch {
	case r.State == RowCompleted || r.State == RowCancelled:
		it.State = claim.Completed
		if r.State == RowCancelled {
			it.State = claim.Cancelled
		}
		it.FinishedAt = r.FinishedAt
	case r.State == RowDead:
		it.State, it.DeadAt = claim.Dead, r.DeadAt
	case r.State == RowClaimed && r.Due.After(now):
		it.State = claim.Claimed
	case r.State == RowClaimed:
		it.History = append(it.History, claim.Failure{Attempt: r.Attempts, Owner: r.Owner, At: r.Due,
			Reason: "lease expired", Lost: true})
		if r.Attempts >= r.MaxAttempts {
			it.State, it.DeadAt = claim.Dead, r.Due
		} else {
			it.State, it.VisibleAt = claim.Visible, r.Due
		}
	case r.Due.After(now):
		it.State, it.VisibleAt = claim.Delayed, r.Due
	default:
		it.State, it.VisibleAt = claim.Visible, r.Due
	}
	return it, nil
}

// ClonePayload copies b, keeping nil apart from empty.
func ClonePayload(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// ClaimedRow is a row as a Claim statement returns it, in Go's types.
type ClaimedRow struct {
	ID, Token                      int64
	Queue, Owner, Kind             string
	Tags                           string // JSON, as claimstore.TagsJSON writes them
	Payload, Metadata              []byte
	Attempt, MaxAttempts, Priority int
	Timeout                        time.Duration
	Enqueued, Expires              time.Time
}

// Claim is the row as a claim.Claim, which holds the row's slices.
func (r *ClaimedRow) Claim() (claim.Claim, error) {
	tags, err := claimstore.ParseTagsJSON(r.Tags)
	if err != nil {
		return claim.Claim{}, fmt.Errorf("item %d: %w", r.ID, err)
	}
	return claim.Claim{
		Queue: r.Queue, Kind: r.Kind, Tags: tags, Metadata: r.Metadata, Item: claim.ItemID(r.ID), Owner: r.Owner,
		Payload: r.Payload, Attempt: r.Attempt, MaxAttempts: r.MaxAttempts, Priority: r.Priority,
		Timeout: r.Timeout, EnqueuedAt: r.Enqueued, ExpiresAt: r.Expires,
		Ref: claim.Ref{Item: claim.ItemID(r.ID), Token: uint64(r.Token)},
	}, nil
}
