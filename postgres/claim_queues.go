package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/lease/claim"
)

// Pause pauses queue for every store on the table, in every process: a
// row of [ClaimQueuesTable] that each Claim statement checks, so that it
// takes nothing from the queue. Enqueue goes on, and still notifies: a
// waiting worker wakes, finds nothing and waits again, one round trip per
// notification, no poll sooner. Pausing a paused queue changes nothing.
func (s *ClaimStore) Pause(ctx context.Context, queue string) error { return s.eng.Pause(ctx, queue) }

// Resume resumes queue and wakes its waiters in every process with a
// notification sent as the resume commits. Resuming a queue that is not
// paused changes nothing.
func (s *ClaimStore) Resume(ctx context.Context, queue string) error { return s.eng.Resume(ctx, queue) }

// Pause pauses or resumes queue in one statement; Resume's notifies the
// queue as it commits.
func (d dialect) Pause(ctx context.Context, queue string, paused bool) error {
	if paused {
		if _, err := d.pool.Exec(ctx, d.sql.pause, d.table, queue); err != nil {
			return err
		}
		return nil
	}
	var n int64
	if err := d.pool.QueryRow(ctx, d.sql.resume, d.table, queue).Scan(&n); err != nil {
		return err
	}
	return nil
}

// Queues lists the queues with rows in any state and the paused ones, in
// byte order, with their counts as of now on the database's clock. It
// reads the table's distinct queues and every row of the queues listed:
// an inspection call, not one for a hot path.
func (s *ClaimStore) Queues(ctx context.Context, q claim.QueueQuery) ([]claim.QueueInfo, error) {
	return s.eng.Queues(ctx, q)
}

// Queues is one statement, planned without JIT compilation (withoutJIT).
func (d dialect) Queues(ctx context.Context, q claim.QueueQuery) ([]claim.QueueInfo, error) {
	var out []claim.QueueInfo
	err := d.withoutJIT(ctx, d.sql.queues, []any{d.table, q.After, q.Limit}, func(rows pgx.Rows) error {
		out = []claim.QueueInfo{}
		var (
			name     string
			counts   [6]int64
			pausedAt *time.Time
		)
		_, err := pgx.ForEachRow(rows, []any{&name, &counts[0], &counts[1], &counts[2], &counts[3], &counts[4], &counts[5], &pausedAt}, func() error {
			info := claim.QueueInfo{Name: name, Counts: claim.Counts{Visible: int(counts[0]), Delayed: int(counts[1]),
				Claimed: int(counts[2]), Dead: int(counts[3]), Completed: int(counts[4]), Cancelled: int(counts[5])}}
			if pausedAt != nil {
				info.Paused, info.PausedAt = true, *pausedAt
			}
			out = append(out, info)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
