package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
)

var (
	_ claimstore.Pauser      = (*ClaimStore)(nil)
	_ claimstore.QueueLister = (*ClaimStore)(nil)
)

// Pause pauses queue for every store on the table, in every process: a
// row of [ClaimQueuesTable] that each Claim statement checks, so that it
// takes nothing from the queue. Enqueue goes on, and still notifies: a
// waiting worker wakes, finds nothing and waits again, one round trip per
// notification, no poll sooner. Pausing a paused queue changes nothing.
func (s *ClaimStore) Pause(ctx context.Context, queue string) error {
	const op = "pause"
	if err := s.begin(ctx, op); err != nil {
		return err
	}
	if err := checks.Name("claims."+op, "queue", queue); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, s.sql.pause, s.table, queue); err != nil {
		return s.fail(op, err)
	}
	return nil
}

// Resume resumes queue and wakes its waiters in every process with a
// notification sent as the resume commits. Resuming a queue that is not
// paused changes nothing.
func (s *ClaimStore) Resume(ctx context.Context, queue string) error {
	const op = "resume"
	if err := s.begin(ctx, op); err != nil {
		return err
	}
	if err := checks.Name("claims."+op, "queue", queue); err != nil {
		return err
	}
	var n int64
	if err := s.pool.QueryRow(ctx, s.sql.resume, s.table, queue).Scan(&n); err != nil {
		return s.fail(op, err)
	}
	return nil
}

// Queues lists the queues with rows in any state and the paused ones, in
// byte order, with their counts as of now on the database's clock. It
// reads the table's distinct queues and every row of the queues listed:
// an inspection call, not one for a hot path.
func (s *ClaimStore) Queues(ctx context.Context, q claim.QueueQuery) ([]claim.QueueInfo, error) {
	const op = "queues"
	if err := s.begin(ctx, op); err != nil {
		return nil, err
	}
	if err := checks.QueueQuery("claims."+op, q); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.sql.queues, s.table, q.After, q.Limit)
	if err != nil {
		return nil, s.fail(op, err)
	}
	out := []claim.QueueInfo{}
	var (
		name                   string
		v, d, c, x, done, gone int64
		pausedAt               *time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&name, &v, &d, &c, &x, &done, &gone, &pausedAt}, func() error {
		info := claim.QueueInfo{Name: name, Counts: claim.Counts{Visible: int(v), Delayed: int(d), Claimed: int(c),
			Dead: int(x), Completed: int(done), Cancelled: int(gone)}}
		if pausedAt != nil {
			info.Paused, info.PausedAt = true, *pausedAt
		}
		out = append(out, info)
		return nil
	})
	if err != nil {
		return nil, s.fail(op, err)
	}
	return out, nil
}
