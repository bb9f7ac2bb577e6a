package postgres

import (
	"time"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/internal/sqlclaim"
)

// itemRow is a row as claimColumns lists it, in pgx's types, with the
// statement's now last.
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

// item is the row as a claim.Item as of the statement's now. The item
// takes the row's payload and metadata: pgx gives the next row its own.
func (r *itemRow) item() (claim.Item, error) {
	row := sqlclaim.Row{
		ID: r.id, Queue: r.queue, Kind: r.kind, Key: deref(r.key), Owner: deref(r.owner),
		Payload: r.payload, Metadata: r.metadata, History: r.history, Tags: r.tags,
		State: int(r.state), Priority: int(r.priority), Attempts: int(r.attempts), MaxAttempts: int(r.maxAttempts),
		Timeout: time.Duration(r.timeout) * time.Microsecond, Enqueued: r.enqueued, Due: r.due,
	}
	if r.deadAt != nil {
		row.DeadAt = *r.deadAt
	}
	if r.finishedAt != nil {
		row.FinishedAt = *r.finishedAt
	}
	r.payload, r.metadata = nil, nil // the next row gets its own
	return row.Item(r.now, time.UnixMicro)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
