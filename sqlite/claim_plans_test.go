package sqlite_test

import (
	"database/sql"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/sqlite"
)

// fullScan is a line of a query plan that reads the whole claim table.
var fullScan = regexp.MustCompile(`^SCAN (lease_claims|t)\b`)

// Beside a history of finished items, Counts and Queues read the rows of
// no other queue and no other state: the kept states are counted in
// lease_claims_kept alone, the live ones through the claim index, and no
// statement scans the table, before ANALYZE and after it. Their counts are
// those of every state.
func TestInspectPlansBesideHistory(t *testing.T) {
	t.Parallel()
	clk := leasetest.NewFakeClock(epoch)
	path := tempFile(t)
	opts := append(testOptions(clk), sqlite.WithRetention(claim.StandardRetention))
	s := newClaimStore(t, path, opts...)
	require.NoError(t, s.Close())
	fillFinished(t, path, "history", 20_000)

	s = newClaimStore(t, path, opts...)
	ctx := t.Context()
	got, err := s.Enqueue(ctx, []claim.NewItem{
		{Queue: "small", MaxAttempts: 1}, {Queue: "small", MaxAttempts: 1}, {Queue: "small", MaxAttempts: 1},
		{Queue: "small", MaxAttempts: 1}, {Queue: "small", MaxAttempts: 1, Delay: time.Hour},
	})
	require.NoError(t, err)
	claims, err := s.Claim(ctx, claim.ClaimRequest{Queue: "small", Owner: "w", Limit: 3, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, claims, 3)
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: claims[0].Ref, How: claim.SettleComplete}))
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: claims[1].Ref, How: claim.SettleDead, Reason: "boom"}))
	require.NoError(t, s.Cancel(ctx, "small", got[4].ID))
	require.NoError(t, s.Pause(ctx, "paused"))

	small := claim.Counts{Visible: 1, Claimed: 1, Dead: 1, Completed: 1, Cancelled: 1}
	counts, err := s.Counts(ctx, "small")
	require.NoError(t, err)
	assert.Equal(t, small, counts)
	counts, err = s.Counts(ctx, "history")
	require.NoError(t, err)
	assert.Equal(t, claim.Counts{Completed: 20_000}, counts)
	queues, err := s.Queues(ctx, claim.QueueQuery{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, []claim.QueueInfo{
		{Name: "history", Counts: claim.Counts{Completed: 20_000}},
		{Name: "paused", Paused: true, PausedAt: epoch},
		{Name: "small", Counts: small},
	}, queues)
	queues, err = s.Queues(ctx, claim.QueueQuery{After: "history", Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, []claim.QueueInfo{{Name: "paused", Paused: true, PausedAt: epoch}}, queues)

	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer func() { _ = raw.Close() }()
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			_, err := raw.Exec(`ANALYZE`)
			require.NoError(t, err)
		}
		for name, stmt := range map[string]string{"Counts": sqlite.SQLCounts, "Queues": sqlite.SQLQueues} {
			plan := queryPlan(t, raw, stmt)
			for _, line := range plan {
				assert.NotRegexp(t, fullScan, line, "%s, analyzed %v:\n%s", name, analyzed, strings.Join(plan, "\n"))
			}
			assert.Contains(t, plan, "SEARCH lease_claims USING COVERING INDEX lease_claims_kept (queue=? AND state=?)",
				"%s, analyzed %v:\n%s", name, analyzed, strings.Join(plan, "\n"))
		}
	}
}

// queryPlan is the details of EXPLAIN QUERY PLAN of stmt, a line each.
func queryPlan(t *testing.T, db *sql.DB, stmt string) []string {
	t.Helper()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+stmt, sql.Named("queue", "small"), sql.Named("now", epoch.UnixNano()),
		sql.Named("after", ""), sql.Named("limit", 10))
	require.NoError(t, err)
	defer func() { _ = rows.Close() }()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	return plan
}
