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

// livePart returns the part of plan that finds the claims, the CTE named
// live.
func livePart(plan string) string {
	_, rest, _ := strings.Cut(plan, "CTE live")
	part, _, _ := strings.Cut(rest, "\n  CTE ")
	if before, _, ok := strings.Cut(part, "\n  ->"); ok {
		part = before // extend: the update that follows the CTE
	}
	return part
}

// Settle and Extend look each claim up by its ID, in one statement for a
// batch of one or of a thousand, even where the statistics say the claims
// index is nearly empty: a table of mostly finished rows, as retention
// keeps. That index still holds an entry for every claim of the last
// lease duration until vacuum removes it, so a search through it right
// after a burn-down walked tens of thousands of dead entries for each
// statement; and a scan of the whole table, which the planner chose for
// large batches once it could not use that index, costs as much.
func TestSettleAndExtendFindClaimsByID(t *testing.T) {
	s := newTestClaimStore(t, WithRetention(claim.StandardRetention))
	const finished, claimed = 5000, 1000
	items := make([]claim.NewItem, finished+claimed)
	for i := range items {
		items[i] = item("q", "done")
	}
	enqueue(t, s, items...)
	_, err := s.pool.Exec(ctx, "UPDATE "+s.table+" SET state = 5, finished_at = now() WHERE id IN (SELECT id FROM "+s.table+" ORDER BY id LIMIT $1)", finished)
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, "ANALYZE "+s.table)
	require.NoError(t, err)
	cs := claimN(t, s, "q", "w", claimed)
	require.Len(t, cs, claimed)

	for _, n := range []int{1, claimed} {
		var (
			ids, tokens, afters, leases []int64
			hows                        []int32
			reasons                     []string
		)
		for _, c := range cs[:n] {
			ids, tokens = append(ids, int64(c.Item)), append(tokens, int64(c.Ref.Token))
			hows, afters, reasons = append(hows, int32(claim.SettleComplete)), append(afters, 0), append(reasons, "")
			leases = append(leases, micros(time.Minute))
		}
		for _, mode := range []string{"custom", "generic"} {
			settle := []any{ids, tokens, hows, afters, reasons}
			plans := map[string]string{
				"settle":    explainTx(t, s, mode, s.sql.settle, settle...),
				"settle tx": explainTx(t, s, mode, s.sql.settleTx, settle...),
				"extend":    explainTx(t, s, mode, s.sql.extend, ids, tokens, leases),
			}
			for name, plan := range plans {
				live := livePart(plan)
				assert.Contains(t, live, "_pkey", "%s of %d, %s plan:\n%s", name, n, mode, plan)
				assert.NotContains(t, live, "queue_due_idx", "%s of %d, %s plan, searches the claims index:\n%s", name, n, mode, plan)
				assert.NotContains(t, live, "Seq Scan", "%s of %d, %s plan, scans the table:\n%s", name, n, mode, plan)
			}
		}
	}
	for _, c := range cs {
		require.NoError(t, s.Settle(ctx, complete(c)), "the claims are still live: the plans were rolled back")
	}
}

// The statements of the hot path (enqueue, claim, extend, settle) are
// planned a few times per connection, then run from one generic plan:
// none of their estimates depends on the values of their parameters.
// Planned anew for each call, as PostgreSQL does when a plan for the
// values looks cheaper than the generic one, a claim spent about as long
// in the planner as in running, and a settlement of one claim seven times
// as long.
func TestHotStatementsKeepGenericPlans(t *testing.T) {
	pool := newPool(t, "lease-claims-plans", func(c *pgxpoolConfig) { c.MaxConns = 1 })
	s := claimStoreOn(t, pool, WithClaimTable(uniqueTable()), WithRetention(claim.StandardRetention))
	const calls = 12
	// A backlog with statistics, so that a plan for a claim's limit
	// looks cheaper than one for any limit.
	backlog := make([]claim.NewItem, 1000)
	for i := range backlog {
		backlog[i] = item("q", "x")
	}
	enqueue(t, s, backlog...)
	_, err := pool.Exec(ctx, "ANALYZE "+s.table)
	require.NoError(t, err)
	for range calls - 1 {
		enqueue(t, s, item("q", "x"))
	}
	for range calls {
		cs := claimN(t, s, "q", "w", 1)
		require.Len(t, cs, 1)
		_, err = s.Extend(ctx, cs[0].Ref, time.Minute)
		require.NoError(t, err)
		require.NoError(t, s.Settle(ctx, complete(cs[0])))
	}
	rows, err := pool.Query(ctx, "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")
	require.NoError(t, err)
	type plans struct{ generic, custom int64 }
	got := map[string]plans{}
	var (
		stmt string
		p    plans
	)
	_, err = pgx.ForEachRow(rows, []any{&stmt, &p.generic, &p.custom}, func() error {
		got[stmt] = p
		return nil
	})
	require.NoError(t, err)
	for name, stmt := range map[string]string{"enqueue": s.sql.enqueue, "claim": s.sql.claim, "extend": s.sql.extend, "settle": s.sql.settle} {
		p, ok := got[stmt]
		require.True(t, ok, "%s was not prepared on the connection", name)
		assert.LessOrEqual(t, p.custom, int64(5), "%s planned for its values on %d of %d calls", name, p.custom, calls)
		assert.GreaterOrEqual(t, p.generic, int64(calls-5), "%s ran from its generic plan on %d of %d calls", name, p.generic, calls)
	}
}
