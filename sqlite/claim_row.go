package sqlite

import (
	"database/sql"
	"time"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/internal/sqlclaim"
)

// itemRow is a row as claimColumns lists it, in SQLite's types: instants
// and durations in nanoseconds.
type itemRow struct {
	id, timeout, enqueued, due int64
	queue, kind, tags          string
	key, owner                 sql.NullString
	payload, metadata, history []byte
	state, priority            int
	attempts, maxAttempts      int
	deadAt, finishedAt         sql.NullInt64
}

func (r *itemRow) dest() []any {
	return []any{&r.id, &r.queue, &r.kind, &r.key, &r.payload, &r.state, &r.attempts, &r.maxAttempts, &r.priority,
		&r.timeout, &r.enqueued, &r.due, &r.owner, &r.deadAt, &r.finishedAt, &r.history, &r.tags, &r.metadata}
}

// item is the row as a claim.Item as of now. database/sql gave the row
// its own copies of the payload and metadata, which the item takes.
func (r *itemRow) item(now int64) (claim.Item, error) {
	row := sqlclaim.Row{
		ID: r.id, Queue: r.queue, Kind: r.kind, Key: r.key.String, Owner: r.owner.String,
		Payload: r.payload, Metadata: r.metadata, History: r.history, Tags: r.tags,
		State: r.state, Priority: r.priority, Attempts: r.attempts, MaxAttempts: r.maxAttempts,
		Timeout: time.Duration(r.timeout), Enqueued: at(r.enqueued), Due: at(r.due),
	}
	if r.deadAt.Valid {
		row.DeadAt = at(r.deadAt.Int64)
	}
	if r.finishedAt.Valid {
		row.FinishedAt = at(r.finishedAt.Int64)
	}
	return row.Item(at(now), at)
}
