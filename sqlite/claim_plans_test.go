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

	eachAnalyzed(t, path, func(raw *sql.DB, analyzed bool) {
		for name, stmt := range map[string]string{"Counts": sqlite.SQLCounts, "Queues": sqlite.SQLQueues} {
			plan := queryPlan(t, raw, stmt)
			for _, line := range plan {
				assert.NotRegexp(t, fullScan, line, "%s, analyzed %v:\n%s", name, analyzed, strings.Join(plan, "\n"))
			}
			assert.Contains(t, plan, "SEARCH lease_claims USING COVERING INDEX lease_claims_kept (queue=? AND state=?)",
				"%s, analyzed %v:\n%s", name, analyzed, strings.Join(plan, "\n"))
		}
	})
}

// eachAnalyzed calls f with a connection to the file at path, before
// ANALYZE and after it.
func eachAnalyzed(t *testing.T, path string, f func(raw *sql.DB, analyzed bool)) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer func() { _ = raw.Close() }()
	f(raw, false)
	_, err = raw.Exec(`ANALYZE`)
	require.NoError(t, err)
	f(raw, true)
}

// queryPlan is the details of EXPLAIN QUERY PLAN of stmt, a line each;
// more are the arguments stmt takes beside :queue, :now, :after and
// :limit.
func queryPlan(t *testing.T, db *sql.DB, stmt string, more ...any) []string {
	t.Helper()
	args := append([]any{sql.Named("queue", "small"), sql.Named("now", epoch.UnixNano()),
		sql.Named("after", ""), sql.Named("limit", 10)}, more...)
	rows, err := db.Query("EXPLAIN QUERY PLAN "+stmt, args...)
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

// A claim of one item takes it in one statement that finds it through the
// claim index and updates it by its rowid, scanning nothing, before
// ANALYZE and after it.
func TestClaimOnePlan(t *testing.T) {
	t.Parallel()
	path := tempFile(t)
	s := newClaimStore(t, path)
	_, err := s.Enqueue(t.Context(), noopItems("small", 3))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	eachAnalyzed(t, path, func(raw *sql.DB, analyzed bool) {
		plan := queryPlan(t, raw, sqlite.SQLTakeNext, sql.Named("owner", "w"), sql.Named("due", epoch.UnixNano()))
		for _, line := range plan {
			assert.NotRegexp(t, fullScan, line, "analyzed %v:\n%s", analyzed, strings.Join(plan, "\n"))
		}
		assert.Contains(t, plan, "SEARCH lease_claims USING INTEGER PRIMARY KEY (rowid=?)", "analyzed %v:\n%s", analyzed, strings.Join(plan, "\n"))
		assert.Contains(t, plan, "SEARCH lease_claims USING INDEX lease_claims_ready (queue=?)", "analyzed %v:\n%s", analyzed, strings.Join(plan, "\n"))
	})
}

// A claim of one item whose next row is an expired claim on its last
// attempt buries it and takes the row after it, as a claim of more does.
func TestClaimOneBuriesAndTakesTheNext(t *testing.T) {
	t.Parallel()
	clk := leasetest.NewFakeClock(epoch)
	s := newClaimStore(t, tempFile(t), testOptions(clk)...)
	ctx := t.Context()
	first, err := s.Enqueue(ctx, []claim.NewItem{{Queue: "q", MaxAttempts: 1}})
	require.NoError(t, err)
	claims, err := s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "a", Limit: 1, Lease: time.Second})
	require.NoError(t, err)
	require.Len(t, claims, 1)
	second, err := s.Enqueue(ctx, []claim.NewItem{{Queue: "q", MaxAttempts: 1, Priority: 1}}) // after the first
	require.NoError(t, err)
	clk.Advance(2 * time.Second) // the first claim's lease ended, on its one attempt

	claims, err = s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "b", Limit: 1, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, claims, 1)
	assert.Equal(t, second[0].ID, claims[0].Item)
	dead, err := s.Lookup(ctx, first[0].ID)
	require.NoError(t, err)
	assert.Equal(t, claim.Dead, dead.State)
	c, err := s.Counts(ctx, "q")
	require.NoError(t, err)
	assert.Equal(t, claim.Counts{Claimed: 1, Dead: 1}, c)
}
