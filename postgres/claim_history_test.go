package postgres

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// planBuffers runs stmt under EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) in a
// transaction that is rolled back, planned for its arguments, and returns
// the shared buffers the statement read (hits and reads, as the server
// counts them whatever the machine's load) and an outline of its plan,
// whose node types and index names a test can look for.
func planBuffers(t *testing.T, s *ClaimStore, stmt string, args ...any) (int, string) {
	t.Helper()
	return planBuffersMode(t, s, "custom", stmt, args...)
}

// planBuffersMode is planBuffers with the plan made for the arguments
// (mode custom) or for any (generic), as a prepared statement's may be
// after a few runs.
func planBuffersMode(t *testing.T, s *ClaimStore, mode, stmt string, args ...any) (int, string) {
	t.Helper()
	var plan []byte
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_"+mode+"_plan"); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+stmt, args...).Scan(&plan); err != nil {
			return err
		}
		return errRollback
	})
	require.ErrorIs(t, err, errRollback)
	var doc []struct {
		Plan struct {
			Hit  int `json:"Shared Hit Blocks"`
			Read int `json:"Shared Read Blocks"`
		} `json:"Plan"`
	}
	require.NoError(t, json.Unmarshal(plan, &doc))
	require.Len(t, doc, 1)
	return doc[0].Plan.Hit + doc[0].Plan.Read, planOutline(t, plan)
}

// planOutline returns a plan in FORMAT JSON as one line per node: its
// type, relation or index, rows and shared buffers, indented by depth.
func planOutline(t *testing.T, plan []byte) string {
	t.Helper()
	type node struct {
		Type     string `json:"Node Type"`
		Relation string `json:"Relation Name"`
		Index    string `json:"Index Name"`
		Rows     int    `json:"Actual Rows"`
		Loops    int    `json:"Actual Loops"`
		Hit      int    `json:"Shared Hit Blocks"`
		Read     int    `json:"Shared Read Blocks"`
		Plans    []json.RawMessage
	}
	var doc []struct{ Plan json.RawMessage }
	require.NoError(t, json.Unmarshal(plan, &doc))
	var b strings.Builder
	var walk func(raw json.RawMessage, depth int)
	walk = func(raw json.RawMessage, depth int) {
		var n node
		require.NoError(t, json.Unmarshal(raw, &n))
		fmt.Fprintf(&b, "%s%s %s %s rows=%d loops=%d buffers=%d\n", strings.Repeat("  ", depth), n.Type, n.Relation, n.Index, n.Rows, n.Loops, n.Hit+n.Read)
		for _, c := range n.Plans {
			walk(c, depth+1)
		}
	}
	walk(doc[0].Plan, 0)
	return b.String()
}

// fillFinished adds n rows of queue in state (5 completed or 6 cancelled)
// to s's table in one statement, as the settle statement leaves them,
// each finished within the hour before age ago: a day of history without
// a day of work.
func fillFinished(t *testing.T, s *ClaimStore, queue string, state, n int, age time.Duration) {
	t.Helper()
	_, err := s.pool.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (queue, kind, payload, state, attempts, max_attempts, priority, enqueued_at, due, finished_at)
SELECT $1, 'done', '{}', $4, 1, 3, 0, f - interval '1 minute', f - interval '1 minute', f
FROM (SELECT now() - $3 * interval '1 microsecond' - (g %% 3600) * interval '1 second' AS f FROM generate_series(1, $2) AS g) AS s`, s.table),
		queue, n, micros(age), state)
	require.NoError(t, err)
}

// vacuumAnalyze vacuums s's table and refreshes its statistics, as
// autovacuum would after the history was written.
func vacuumAnalyze(t *testing.T, s *ClaimStore) (heapPages int) {
	t.Helper()
	_, err := s.pool.Exec(ctx, "VACUUM ANALYZE "+s.table)
	require.NoError(t, err)
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT (pg_relation_size($1::regclass) / 8192)::int", s.table).Scan(&heapPages))
	return heapPages
}

// scanCounts counts the items of queue in each state by reading every row
// of the table: the definition that Counts must agree with.
func scanCounts(t *testing.T, s *ClaimStore, queue string) claim.Counts {
	t.Helper()
	rows, err := s.pool.Query(ctx, "SELECT "+effectiveState+", count(*) FROM "+s.table+" WHERE queue = $1 GROUP BY 1", queue)
	require.NoError(t, err)
	var c claim.Counts
	var state, n int
	_, err = pgx.ForEachRow(rows, []any{&state, &n}, func() error {
		*map[int]*int{1: &c.Visible, 2: &c.Delayed, 3: &c.Claimed, 4: &c.Dead, 5: &c.Completed, 6: &c.Cancelled}[state] = n
		return nil
	})
	require.NoError(t, err)
	return c
}

// liveQueue fills queue with items in every state through the store:
// visible, delayed, claimed, an expired claim that is visible again, an
// expired claim on its last attempt (dead), a dead letter, a completed
// and a cancelled item.
func liveQueue(t *testing.T, s *ClaimStore, queue string) {
	t.Helper()
	last := item(queue, "last")
	last.MaxAttempts, last.Priority = 1, 5
	expired := item(queue, "expired")
	expired.Priority = 5
	enqueue(t, s, last, expired, item(queue, "dead"), item(queue, "done"))
	cs := map[string]claim.Claim{}
	for _, c := range claimN(t, s, queue, "w", 4) {
		cs[string(c.Payload)] = c
	}
	require.Len(t, cs, 4)
	expire(t, s, cs["last"].Item, time.Second)
	expire(t, s, cs["expired"].Item, time.Second)
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: cs["dead"].Ref, How: claim.SettleDead, Reason: "bad"}))
	require.NoError(t, s.Settle(ctx, complete(cs["done"])))
	gone := enqueue(t, s, item(queue, "gone"))[0]
	require.NoError(t, s.Cancel(ctx, queue, gone.ID))
	visible := item(queue, "visible")
	visible.Priority = 9
	delayed := item(queue, "delayed")
	delayed.Delay = time.Hour
	enqueue(t, s, visible, item(queue, "claimed"), delayed)
	// The claimed item, priority 0, goes before the expired claim.
	require.Len(t, claimN(t, s, queue, "w", 1), 1)
}

// Counts and Queues find each state's items through the index over that
// state's rows: with a day of finished items kept, they read a few index
// pages per thousand of them, never the table, and a queue without history
// costs as little beside a large one as on an empty table. Scanning the
// table, they read every page of it for any queue.
func TestCountsAndQueuesReadIndexesNotTheTable(t *testing.T) {
	s := newTestClaimStore(t, WithRetention(claim.StandardRetention))
	const finished = 20000
	fillFinished(t, s, "big", 5, finished, 0)
	fillFinished(t, s, "big", 6, 100, 0)
	liveQueue(t, s, "small")
	require.NoError(t, s.Pause(ctx, "paused"))
	heap := vacuumAnalyze(t, s)

	want := scanCounts(t, s, "small")
	assert.Equal(t, claim.Counts{Visible: 2, Delayed: 1, Claimed: 1, Dead: 2, Completed: 1, Cancelled: 1}, want)
	assert.Equal(t, want, counts(t, s, "small"))
	assert.Equal(t, claim.Counts{Completed: finished, Cancelled: 100}, counts(t, s, "big"))
	assert.Equal(t, scanCounts(t, s, "big"), counts(t, s, "big"))

	for _, mode := range []string{"custom", "generic"} {
		for _, q := range []string{"small", "big"} {
			_, plan := planBuffersMode(t, s, mode, s.sql.counts, q)
			assert.NotContains(t, plan, "Seq Scan", "%s plan of the counts of %s:\n%s", mode, q, plan)
		}
		_, plan := planBuffersMode(t, s, mode, s.sql.queues, s.table, "", 10)
		assert.NotContains(t, plan, "Seq Scan", "%s plan of the queues:\n%s", mode, plan)
	}
	small, plan := planBuffers(t, s, s.sql.counts, "small")
	assert.NotContains(t, plan, "Seq Scan", plan)
	assert.Less(t, small, 60, "Counts of a queue without history, beside %d finished rows in %d pages:\n%s", finished, heap, plan)
	big, plan := planBuffers(t, s, s.sql.counts, "big")
	assert.NotContains(t, plan, "Seq Scan", plan)
	assert.Less(t, big, heap/3, "Counts of %d finished rows in %d pages:\n%s", finished, heap, plan)

	infos, err := s.Queues(ctx, claim.QueueQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, infos, 3)
	assert.Equal(t, []string{"big", "paused", "small"}, []string{infos[0].Name, infos[1].Name, infos[2].Name})
	assert.Equal(t, scanCounts(t, s, "big"), infos[0].Counts)
	assert.True(t, infos[1].Paused)
	assert.Equal(t, claim.Counts{}, infos[1].Counts)
	assert.Equal(t, want, infos[2].Counts)
	after, err := s.Queues(ctx, claim.QueueQuery{After: "big", Limit: 1})
	require.NoError(t, err)
	require.Len(t, after, 1)
	assert.Equal(t, "paused", after[0].Name)

	queues, plan := planBuffers(t, s, s.sql.queues, s.table, "", 10)
	assert.NotContains(t, plan, "Seq Scan", plan)
	assert.Less(t, queues, big+small+60, "Queues reads what the Counts of its queues read, and a few pages per queue for the names:\n%s", plan)
}

// Queue names are listed in byte order whatever the database's collation,
// found by skipping through the indexes, which are in that collation.
func TestQueuesByteOrderFromIndexes(t *testing.T) {
	s := newTestClaimStore(t, WithRetention(claim.StandardRetention))
	names := []string{"b", "B", "a", "_", "é", "A1", "a0"}
	for i, q := range names {
		switch i % 3 {
		case 0:
			enqueue(t, s, item(q, "x"))
		case 1:
			fillFinished(t, s, q, 5, 3, 0)
		case 2:
			fillFinished(t, s, q, 6, 2, 0)
		}
	}
	enqueue(t, s, item("c", "claimed"))
	require.Len(t, claimN(t, s, "c", "w", 1), 1)
	vacuumAnalyze(t, s)
	var got []string
	after := ""
	for {
		page, err := s.Queues(ctx, claim.QueueQuery{After: after, Limit: 3})
		require.NoError(t, err)
		for _, q := range page {
			got = append(got, q.Name)
			assert.Equal(t, scanCounts(t, s, q.Name), q.Counts, q.Name)
		}
		if len(page) < 3 {
			break
		}
		after = page[len(page)-1].Name
	}
	assert.Equal(t, []string{"A1", "B", "_", "a", "a0", "b", "c", "é"}, got)
}

// Clean deletes each row where its search found it, by the row's ctid,
// rather than searching the primary key again for it: three page reads per
// row deleted (its cleaner index entry, and the row twice), where the
// search by ID added a walk down the primary key.
func TestCleanDeletesRowsWhereItFoundThem(t *testing.T) {
	s := newTestClaimStore(t, WithRetention(claim.StandardRetention))
	fillFinished(t, s, "q", 5, 20000, 25*time.Hour)
	vacuumAnalyze(t, s)
	const limit = 1000
	n, plan := planBuffers(t, s, s.sql.clean, micros(24*time.Hour), micros(24*time.Hour), micros(7*24*time.Hour), limit, s.table)
	assert.Contains(t, plan, "Tid Scan", plan)
	assert.LessOrEqual(t, n, 3*limit+50, "Clean of %d rows:\n%s", limit, plan)
	got, err := s.Clean(ctx, limit)
	require.NoError(t, err)
	assert.Equal(t, limit, got)
	assert.Equal(t, claim.Counts{Completed: 20000 - limit}, counts(t, s, "q"))
}

// A dead letter requeued while Clean deletes it stays: the cleaner deletes
// a row only in the state it found it in.
func TestCleanLeavesRowsThatChangedState(t *testing.T) {
	s := newTestClaimStore(t, WithRetention(claim.Retention{Completed: time.Hour, Cancelled: time.Hour, Dead: time.Millisecond}))
	enqueue(t, s, item("q", "dead"))
	c := claimN(t, s, "q", "w", 1)
	require.Len(t, c, 1)
	require.NoError(t, s.Settle(ctx, claim.Settlement{Ref: c[0].Ref, How: claim.SettleDead, Reason: "bad"}))
	_, err := s.pool.Exec(ctx, "UPDATE "+s.table+" SET dead_at = now() - interval '1 hour'")
	require.NoError(t, err)
	// The requeue runs between the cleaner's search and its delete: it
	// holds the row while the cleaner starts, and commits once the
	// cleaner waits for it.
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, s.sql.requeueDead, "q", int64(c[0].Item))
	require.NoError(t, err)
	done := make(chan error, 1)
	var cleaned int
	go func() {
		var err error
		cleaned, err = s.Clean(ctx, 10)
		done <- err
	}()
	waitForLockWait(t, s)
	require.NoError(t, tx.Commit(ctx))
	require.NoError(t, <-done)
	assert.Zero(t, cleaned)
	assert.Equal(t, claim.Counts{Visible: 1}, counts(t, s, "q"))
}

// waitForLockWait returns once a backend of s's pool other than the
// caller's waits for a row lock.
func waitForLockWait(t *testing.T, s *ClaimStore) {
	t.Helper()
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
WHERE wait_event_type = 'Lock' AND datname = current_database()`).Scan(&n))
		return n > 0
	}, time.Minute, time.Millisecond)
}

// A table of version 5, with finished rows and dead letters, is migrated to
// version 6 in place: version 1's index of dead rows gives way to one over
// the kept states by queue, state and ID, and the rows keep their states.
func TestClaimStoreMigratesVersion5TableInPlace(t *testing.T) {
	pool := newPool(t, "lease-claims-test")
	s := claimStoreOnVersion(t, pool, 5, WithClaimTable(`it's "v5" `+uniqueTable()), WithRetention(claim.StandardRetention))
	require.Equal(t, []string{"(queue, id) WHERE (state = 4)"}, keptIndexes(t, s))
	liveQueue(t, s, "q")
	fillFinished(t, s, "q", 5, 100, 0)
	want := scanCounts(t, s, "q")

	_, options := claimIndexes(t, s)
	assert.NotContains(t, options, "vacuum_index_cleanup=on")

	require.NoError(t, s.Migrate(ctx))
	assert.Equal(t, []string{"(queue, state, id) WHERE (state = ANY (ARRAY[4, 5, 6]))"}, keptIndexes(t, s))
	requireVersion5Indexes(t, s)
	_, options = claimIndexes(t, s)
	assert.Contains(t, options, "vacuum_index_cleanup=on")
	assert.Equal(t, want, counts(t, s, "q"))
	assert.Equal(t, claim.Counts{Visible: 2, Delayed: 1, Claimed: 1, Dead: 2, Completed: 101, Cancelled: 1}, want)
	infos, err := s.Queues(ctx, claim.QueueQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, infos, 1)
	assert.Equal(t, want, infos[0].Counts)
	dead, err := s.List(ctx, claim.Query{Queue: "q", State: claim.Dead, Limit: 10})
	require.NoError(t, err)
	assert.Len(t, dead, 2)
}

// keptIndexes returns the columns and predicates of the indexes of s's
// table over dead or finished rows by queue.
func keptIndexes(t *testing.T, s *ClaimStore) []string {
	t.Helper()
	rows, err := s.pool.Query(ctx, `SELECT substring(pg_get_indexdef(indexrelid) FROM '\(queue, [^)]*id\) WHERE .*$') FROM pg_index
WHERE indrelid = $1::regclass AND pg_get_indexdef(indexrelid) ~ '\(queue, [^)]*id\) WHERE' AND pg_get_indexdef(indexrelid) !~ 'due'
ORDER BY 1`, s.table)
	require.NoError(t, err)
	defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return defs
}

// A page of List reads the rows of the states it may return, through the
// index over each: a small queue's page, or a page of dead letters, beside
// a day of another queue's history reads a few pages, where a walk of the
// primary key read every row before them.
func TestListReadsOnlyTheStatesItLists(t *testing.T) {
	s := newTestClaimStore(t, WithRetention(claim.StandardRetention))
	fillFinished(t, s, "big", 5, 20000, 0)
	liveQueue(t, s, "small")
	fillFinished(t, s, "big", 5, 100, 0)
	// The big queue's backlog, behind its history in ID order.
	backlog := make([]claim.NewItem, 2000)
	for i := range backlog {
		backlog[i] = item("big", "waiting")
	}
	enqueue(t, s, backlog...)
	heap := vacuumAnalyze(t, s)

	all := map[claim.State][]string{}
	items, err := s.List(ctx, claim.Query{Queue: "small", Limit: 100})
	require.NoError(t, err)
	for i, it := range items {
		if i > 0 {
			require.Less(t, items[i-1].ID, it.ID, "ID order")
		}
		all[it.State] = append(all[it.State], string(it.Payload))
	}
	assert.Equal(t, map[claim.State][]string{
		claim.Visible: {"expired", "visible"}, claim.Delayed: {"delayed"}, claim.Claimed: {"claimed"},
		claim.Dead: {"last", "dead"}, claim.Completed: {"done"}, claim.Cancelled: {"gone"},
	}, all)
	for state, want := range all {
		got, err := s.List(ctx, claim.Query{Queue: "small", State: state, Limit: 100})
		require.NoError(t, err)
		var names []string
		for _, it := range got {
			names = append(names, string(it.Payload))
		}
		assert.Equal(t, want, names, state.String())
	}
	page, err := s.List(ctx, claim.Query{Queue: "small", After: items[1].ID, Limit: 2})
	require.NoError(t, err)
	require.Len(t, page, 2)
	assert.Equal(t, []claim.ItemID{items[2].ID, items[3].ID}, []claim.ItemID{page[0].ID, page[1].ID})
	waiting, err := s.List(ctx, claim.Query{Queue: "big", Limit: 3, After: 20095})
	require.NoError(t, err)
	require.Len(t, waiting, 3)
	assert.Equal(t, []string{"{}", "{}", "{}"}, []string{string(waiting[0].Payload), string(waiting[1].Payload), string(waiting[2].Payload)})
	waiting, err = s.List(ctx, claim.Query{Queue: "big", State: claim.Visible, Limit: 3})
	require.NoError(t, err)
	require.Len(t, waiting, 3)
	assert.Equal(t, "waiting", string(waiting[0].Payload))
	done, err := s.List(ctx, claim.Query{Queue: "big", State: claim.Completed, After: 19990, Limit: 3})
	require.NoError(t, err)
	require.Len(t, done, 3)
	assert.Equal(t, claim.ItemID(19991), done[0].ID)

	for _, state := range []claim.State{0, claim.Visible, claim.Delayed, claim.Claimed, claim.Dead, claim.Completed, claim.Cancelled} {
		n, plan := planBuffers(t, s, s.sql.list, "small", int32(state), int64(0), 50, "", "")
		assert.NotContains(t, plan, "Seq Scan", plan)
		assert.Less(t, n, 60, "a page of %v of the small queue beside %d pages of history:\n%s", state, heap, plan)
		_, plan = planBuffersMode(t, s, "generic", s.sql.list, "small", int32(state), int64(0), 50, "", "")
		assert.NotContains(t, plan, "Seq Scan", "generic plan:\n%s", plan)
		n, plan = planBuffers(t, s, s.sql.list, "big", int32(state), int64(0), 50, "", "")
		assert.Less(t, n, 3*50+40, "a page of %v of the queue with the history and a backlog behind it:\n%s", state, plan)
	}
}

// Vacuum removes the index entries that claims and completions leave in
// the claim indexes however many finished rows the table keeps. Left to
// itself (vacuum_index_cleanup = auto) PostgreSQL skips the index pass
// when fewer than 2% of the table's pages hold dead rows: on a table of a
// day's history that is nearly every vacuum, and the entries of every item
// claimed since the last full pass stay at the head of the claim index,
// where each Claim walks them.
func TestVacuumCleansClaimIndexesBesideHistory(t *testing.T) {
	s := newTestClaimStore(t, WithRetention(claim.StandardRetention))
	fillFinished(t, s, "q", 5, 100000, 0)
	vacuumAnalyze(t, s)
	batch := make([]claim.NewItem, 1000)
	for i := range batch {
		batch[i] = item("q", "x")
	}
	enqueue(t, s, batch...)
	enqueue(t, s, batch...)
	for range 10 {
		for _, c := range claimN(t, s, "q", "w", 100) {
			require.NoError(t, s.Settle(ctx, complete(c)))
		}
	}
	heap := vacuumAnalyze(t, s)
	n, plan := planBuffers(t, s, s.sql.claim, "q", []string{"w"}, []int64{micros(time.Minute)}, []int64{1}, 10, s.table)
	waiting := 0
	for _, line := range strings.Split(plan, "\n") {
		if strings.Contains(line, "priority_due_id_idx") {
			_, after, _ := strings.Cut(line, "buffers=")
			waiting, _ = strconv.Atoi(after)
		}
	}
	assert.Positive(t, waiting, plan)
	assert.LessOrEqual(t, waiting, 4, "the claim's search of waiting items after 1,000 claims and a vacuum of %d pages (claim %d buffers):\n%s", heap, n, plan)
}
