package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/internal/sqlclaim"
)

// Settle ends the live claim st.Ref as st.How says, and returns once the
// statement carrying it committed: nil means the outcome is stored. Calls
// from many goroutines share one statement per round trip. A claim that
// is no longer live gets an error matching lease.ErrStaleUse and nothing
// changes.
func (s *ClaimStore) Settle(ctx context.Context, st claim.Settlement) error {
	return s.eng.Settle(ctx, st)
}

// settled is a settlement's answer: whether its claim was live.
type settled = bool

// Settle sends st in the next batch of settlements.
func (d dialect) Settle(ctx context.Context, st claim.Settlement) (bool, error) {
	return d.settles.Do(ctx, &sqlclaim.Call[claim.Settlement, settled]{Op: "settle", Item: st.Ref.Item, Req: st})
}

// runSettle sends one batch of settlements.
func (d dialect) runSettle(ctx context.Context, calls []*sqlclaim.Call[claim.Settlement, settled]) error {
	n := len(calls)
	ids, tokens, afters := make([]int64, n), make([]int64, n), make([]int64, n)
	hows, reasons := make([]int32, n), make([]string, n)
	for i, c := range calls {
		ids[i], tokens[i] = int64(c.Req.Ref.Item), int64(c.Req.Ref.Token)
		hows[i], afters[i], reasons[i] = int32(c.Req.How), micros(c.Req.After), c.Req.Reason
	}
	// A lone call's statement, sent from its caller's goroutine, ends with
	// its caller's context too.
	ctx, stop := sqlclaim.CallerBound(ctx, calls)
	defer stop()
	rows, err := d.pool.Query(ctx, d.sql.settle, ids, tokens, hows, afters, reasons)
	if err != nil {
		return err
	}
	queues := make([]*string, n)
	var (
		pos   int64
		queue *string
	)
	_, err = pgx.ForEachRow(rows, []any{&pos, &queue}, func() error {
		if pos < 1 || pos > int64(n) {
			return fmt.Errorf("settled claim %d of %d", pos, n)
		}
		calls[pos-1].Res, queues[pos-1] = true, queue
		return nil
	})
	if err != nil {
		return err
	}
	now := time.Now()
	for i, c := range calls {
		if c.Res && queues[i] != nil && c.Req.After > 0 {
			d.notes.dueAt(*queues[i], now.Add(c.Req.After))
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
	return s.eng.Cancel(ctx, queue, id)
}

// Cancel is one statement, which notifies the table's channel of the
// claim it ends.
func (d dialect) Cancel(ctx context.Context, queue string, id claim.ItemID) (sqlclaim.Cancelled, error) {
	var (
		gone, token int64
		live        bool
		note        *bool
	)
	err := d.pool.QueryRow(ctx, d.sql.cancel, queue, int64(id)).Scan(&gone, &token, &live, &note)
	if errors.Is(err, pgx.ErrNoRows) {
		return sqlclaim.Cancelled{}, nil
	}
	if err != nil {
		return sqlclaim.Cancelled{}, err
	}
	return sqlclaim.Cancelled{Found: true, Live: live, Token: uint64(token)}, nil
}
