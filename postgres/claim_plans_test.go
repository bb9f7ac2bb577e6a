package postgres

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// explainTx returns the plan of stmt, planned for its arguments (custom)
// or for any (generic), run in a transaction that is rolled back, so that
// the statement changes nothing.
func explainTx(t *testing.T, s *ClaimStore, mode, stmt string, args ...any) string {
	t.Helper()
	var plan []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_"+mode+"_plan"); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF) "+stmt, args...)
		if err != nil {
			return err
		}
		if plan, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		return errRollback
	})
	require.ErrorIs(t, err, errRollback)
	return strings.Join(plan, "\n")
}

var errRollback = fmt.Errorf("rolled back on purpose")

// Settle and Extend find a claim by its ID even where the statistics say
// the claims index is nearly empty: a table of mostly finished rows, as
// retention keeps. That index still holds an entry for every claim of the
// last lease duration until vacuum removes it, so a search through it
// right after a burn-down walked tens of thousands of dead entries for
// each statement.
func TestSettleAndExtendFindClaimsByID(t *testing.T) {
	s := newTestClaimStore(t, WithClaimRetention(claim.StandardRetention))
	items := make([]claim.NewItem, 5000)
	for i := range items {
		items[i] = item("q", "done")
	}
	enqueue(t, s, items...)
	_, err := s.pool.Exec(ctx, "UPDATE "+s.table+" SET state = 5, finished_at = now()")
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, "ANALYZE "+s.table)
	require.NoError(t, err)
	enqueue(t, s, item("q", "next"))
	c := claimN(t, s, "q", "w", 1)[0]

	ids, tokens := []int64{int64(c.Item)}, []int64{int64(c.Ref.Token)}
	for _, mode := range []string{"custom", "generic"} {
		settle := []any{ids, tokens, []int32{int32(claim.SettleComplete)}, []int64{0}, []string{""}}
		plans := map[string]string{
			"settle":    explainTx(t, s, mode, s.sql.settle, settle...),
			"settle tx": explainTx(t, s, mode, s.sql.settleTx, settle...),
			"extend":    explainTx(t, s, mode, s.sql.extend, ids, tokens, []int64{micros(time.Minute)}),
		}
		for name, plan := range plans {
			assert.NotContains(t, plan, "queue_due_idx", "%s, %s plan, searches the claims index:\n%s", name, mode, plan)
			assert.Contains(t, plan, "_pkey", name)
		}
	}
	require.NoError(t, s.Settle(ctx, complete(c)), "the claim is still live: the plans were rolled back")
}
