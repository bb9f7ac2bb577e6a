package sqlite

import (
	"context"
	"database/sql"

	"github.com/leasehold/lease/claim"
)

// Pause pauses queue for every store and process that opens the file, and
// for those that open it later: a row of the file's paused queues, which
// each Claim reads in its transaction, so that it takes nothing from the
// queue. Enqueue, settlements and the inspection calls go on; their
// commits still wake waiters, which find nothing and wait again. Claims
// made before the pause stay live. Pausing a paused queue changes nothing.
func (s *ClaimStore) Pause(ctx context.Context, queue string) error { return s.eng.Pause(ctx, queue) }

// Resume resumes queue. Its commit wakes the waiters of this store at
// once, and those of other processes within the poll ([WithPoll]).
// Resuming a queue that is not paused changes nothing.
func (s *ClaimStore) Resume(ctx context.Context, queue string) error { return s.eng.Resume(ctx, queue) }

// Pause writes or deletes queue's row of paused queues in the shared write
// transaction.
func (d dialect) Pause(ctx context.Context, queue string, paused bool) error {
	op, query := "resume", sqlResume
	if paused {
		op, query = "pause", sqlPause
	}
	return d.write(ctx, op, true, func(ctx context.Context, tx *wtx, now int64) error {
		_, err := tx.ExecContext(ctx, query, sql.Named("queue", queue), sql.Named("now", now))
		return err
	}, nil)
}

// Queues lists the queues with items in any state and the paused ones, in
// byte order, with their counts as of now on the store's clock: a page of
// at most q.Limit above q.After. It counts each queue listed as Counts
// does, so it reads the live rows of those queues and an index entry of
// each of their finished and dead ones: an inspection call, not one for a
// hot path.
func (s *ClaimStore) Queues(ctx context.Context, q claim.QueueQuery) ([]claim.QueueInfo, error) {
	return s.eng.Queues(ctx, q)
}

// Queues is one statement on a reader connection (see readNow).
func (d dialect) Queues(ctx context.Context, q claim.QueueQuery) ([]claim.QueueInfo, error) {
	var out []claim.QueueInfo
	err := d.d.readNow(ctx, func(tx *sql.Tx, now int64) error {
		out = []claim.QueueInfo{}
		rows, err := tx.QueryContext(ctx, sqlQueues, sql.Named("after", q.After), sql.Named("limit", q.Limit),
			sql.Named("now", now))
		if err != nil {
			return err
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var info claim.QueueInfo
			var pausedAt sql.NullInt64
			c := &info.Counts
			if err := rows.Scan(&info.Name, &c.Visible, &c.Delayed, &c.Claimed, &c.Dead, &c.Completed, &c.Cancelled,
				&pausedAt); err != nil {
				return err
			}
			if pausedAt.Valid {
				info.Paused, info.PausedAt = true, at(pausedAt.Int64)
			}
			out = append(out, info)
		}
		return rows.Err()
	})
	return out, err
}
