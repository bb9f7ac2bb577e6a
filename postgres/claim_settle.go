package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/lease/claim"
)

// Settle ends the live claim st.Ref as st.How says, and returns once the
// statement carrying it committed: nil means the outcome is stored. Calls
// from many goroutines share one statement per round trip. A claim that
// is no longer live gets an error matching lease.ErrStaleUse and nothing
// changes.
func (s *ClaimStore) Settle(ctx context.Context, st claim.Settlement) error {
	const op = "settle"
	if err := s.begin(ctx, op); err != nil {
		return err
	}
	if err := checks.Settlement("claims.settle", st); err != nil {
		return err
	}
	s.settling(st.Ref, 1)
	_, err := s.settles.do(ctx, st.Ref, st)
	s.settling(st.Ref, -1)
	return err
}

// runSettle sends one batch of settlements.
func (s *ClaimStore) runSettle(ctx context.Context, calls []*batchCall[claim.Settlement, struct{}]) error {
	n := len(calls)
	ids, tokens, afters := make([]int64, n), make([]int64, n), make([]int64, n)
	hows, reasons := make([]int32, n), make([]string, n)
	for i, c := range calls {
		ids[i], tokens[i] = int64(c.req.Ref.Item), int64(c.req.Ref.Token)
		hows[i], afters[i], reasons[i] = int32(c.req.How), micros(c.req.After), c.req.Reason
	}
	rows, err := s.pool.Query(ctx, s.sql.settle, ids, tokens, hows, afters, reasons)
	if err != nil {
		return s.fail("settle", err)
	}
	settled := make([]bool, n)
	queues := make([]*string, n)
	var (
		pos   int64
		queue *string
	)
	_, err = pgx.ForEachRow(rows, []any{&pos, &queue}, func() error {
		if pos < 1 || pos > int64(n) {
			return fmt.Errorf("settled claim %d of %d", pos, n)
		}
		settled[pos-1], queues[pos-1] = true, queue
		return nil
	})
	if err != nil {
		return s.fail("settle", err)
	}
	now := time.Now()
	for i, c := range calls {
		s.untrack(c.req.Ref)
		if !settled[i] {
			c.err = staleClaim("settle", c.req.Ref)
			continue
		}
		if queues[i] != nil && c.req.After > 0 {
			s.notes.dueAt(*queues[i], now.Add(c.req.After))
		}
	}
	return nil
}

// Cancel deletes the item id of queue whatever its state. If it was
// claimed, its claim ends: later calls on it are stale, and the claim's
// Lost function is called with a cause matching claim.ErrCancelled and
// lease.ErrStaleUse, by this store if it made the claim, or by the store
// that made it (in any process) when the notification Cancel sends reaches
// its listening connection; if that connection was not listening then (not
// started yet, or reconnecting), once it listens again, when the store
// checks the claims it tracks against the table. An item that is not in
// queue gets an error matching claim.ErrNotFound.
func (s *ClaimStore) Cancel(ctx context.Context, queue string, id claim.ItemID) error {
	const op = "cancel"
	if err := s.begin(ctx, op); err != nil {
		return err
	}
	if err := checks.Item("claims."+op, queue, id); err != nil {
		return err
	}
	var (
		gone, token int64
		live        bool
		note        *bool
	)
	err := s.pool.QueryRow(ctx, s.sql.cancel, queue, int64(id)).Scan(&gone, &token, &live, &note)
	if errors.Is(err, pgx.ErrNoRows) {
		return &claim.NotFoundError{Op: op, Queue: queue, Item: id}
	}
	if err != nil {
		return s.fail(op, err)
	}
	if live {
		s.lose(claim.Ref{Item: id, Token: uint64(token)}, op)
	}
	return nil
}
