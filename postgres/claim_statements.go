package postgres

import (
	"fmt"
	"strings"

	"github.com/leasehold/lease/claim"
)

// The values of the state column are sqlclaim's (sqlclaim.RowWaiting and
// the others), written into the statements as numbers.

// Notification payloads on a claim table's channel: a queue that may have
// a claimable item, or a claim ended by Cancel ("c" ID ":" token).
const (
	noteQueue  = "q"
	noteCancel = "c"
)

// The how column of a settlement batch holds claim.Settle values: 1
// complete, 2 retry, 3 dead, 4 snooze.

// claimStatements is the SQL a ClaimStore runs, with its table's quoted
// name filled in once by NewClaimStore.
//
// Every time is now(): the database's clock at the start of the statement's
// transaction, which for these single-statement transactions is when the
// statement started. Durations travel as whole microseconds.
//
// In the statements of the hot path (enqueue, claim, extend, settle) the
// planner sees no parameter's value: each is read through a subquery,
// (SELECT $1::text), which runs once per statement. Their plans then cost
// the same for any values, so a connection plans each a few times and then
// keeps a generic plan, as PostgreSQL does for a prepared statement whose
// generic plan is no dearer than the plans for its values. Planned for the
// values of each call, which PostgreSQL did while the estimates depended
// on the queue, the limit or the length of the arrays, a claim spent about
// as long in the planner as in running (0.3 ms), and a settlement of one
// claim seven times as long.
type claimStatements struct {
	enqueue, existing                   string
	claim, extend, settle, settleTx     string
	cancel, requeueDead, deleteDead     string
	lookup, list, counts, oid, clean    string
	pause, resume, queues, retryNow     string
	removedLive                         string
	migrations, migrated, markMigration string
	v1, v2, v3, v4, v5, v6              []string
}

// claimColumns are the columns rowItem scans, followed by now().
const claimColumns = `id, queue, kind, key, payload, state, attempts, max_attempts, priority, timeout_us,
  enqueued_at, due, owner, dead_at, finished_at, history, tags::text, metadata, now()`

// A read that tells waiting items from delayed ones, or live claims from
// expired ones, compares times with a clock read after its snapshot was
// taken ({NOW}, from the CTE {CLOCK}), not with now(): now() is when the
// statement's transaction began, before the snapshot, so a row committed
// in between (an item enqueued visible, its due time its enqueue's now())
// could be read as due after now(), delayed, which it never was. Every
// row the snapshot holds was committed before the clock is read.
const (
	readClock = `clock AS MATERIALIZED (SELECT clock_timestamp() AS now)`
	readNow   = `(SELECT now FROM clock)`
)

// effectiveState is the claim.State of a row as of now().
const effectiveState = `(CASE WHEN state IN (4, 5, 6) THEN state
  WHEN state = 3 AND due > now() THEN 3
  WHEN state = 3 AND attempts >= max_attempts THEN 4
  WHEN due <= now() THEN 1
  ELSE 2 END)`

// rowState is effectiveState of the row t, for statements that join
// other tables with columns of the same names.
const rowState = `(CASE WHEN t.state IN (4, 5, 6) THEN t.state
  WHEN t.state = 3 AND t.due > now() THEN 3
  WHEN t.state = 3 AND t.attempts >= t.max_attempts THEN 4
  WHEN t.due <= now() THEN 1
  ELSE 2 END)`

// claimByID locks the row of the live claim (i.id, i.token), for Extend
// and Settle, whose inputs i it is joined to laterally, in ID order, so
// that batches over the same rows cannot deadlock. It finds the row by
// primary key whatever the statistics say. The update that follows finds
// it by primary key again, not by the address (ctid) of the version
// locked: a version another transaction committed while the lock was
// awaited is not visible to the statement's snapshot, and an update by
// address would miss it. As a subquery that locks, the
// planner runs it once per input rather than joining the table as a
// whole, which it did by a scan of the table for batches of a thousand;
// and its test of the state is a CASE, which the planner cannot match to
// the predicate of the claims index (WHERE state = 3), so that it does not
// search that index instead. The claims index keeps an entry for each
// claim until vacuum removes it, so right after a burn-down it holds a
// dead entry for every item claimed within the lease, due in the future;
// on a table of mostly finished rows (retention) the statistics say it is
// nearly empty, and the planner walked all those entries for every
// statement: 12 ms per settlement after 30,000 items, against 0.2 ms by
// primary key.
const claimByID = `SELECT t.id FROM {T} AS t
    WHERE t.id = i.id AND t.token = i.token AND (CASE WHEN t.state = 3 THEN t.due > now() ELSE false END)
    FOR UPDATE`

// countsOf counts the items of the queue {QUEUE} (the parameter $1 in
// Counts, each queue listed in Queues) in each claim.State as
// of now(): visible, delayed, claimed, dead, completed and cancelled, as a
// row of one subquery. Each state is counted through the index over its
// rows, so that no count reads the rows of another state, nor of another
// queue: waiting rows in the claim index, read for their due times alone;
// claims in the claims index by expiry, where only the expired ones (each
// visible again, or dead on its last attempt) are read for their
// attempts; dead, completed and cancelled rows as a range of the index by
// queue, state and ID, read without visiting the rows once vacuum marked
// their pages visible to all. A count of kept rows thus reads one index
// page per few hundred of them, never the table. Those are counted in ID
// order, which that index gives for free and a scan of the table would
// have to sort: without it the planner reads the whole table instead
// when one queue holds most of it.
const countsOf = `(SELECT w.visible + x.visible AS visible, w.delayed, c.claimed, d.dead + x.dead AS dead,
    f.completed, g.cancelled
  FROM (SELECT count(*) FILTER (WHERE due <= {NOW}) AS visible, count(*) FILTER (WHERE due > {NOW}) AS delayed
      FROM {T} WHERE queue = {QUEUE} AND state = 1) AS w,
    (SELECT count(*) AS claimed FROM {T} WHERE queue = {QUEUE} AND state = 3 AND due > {NOW}) AS c,
    (SELECT count(*) FILTER (WHERE attempts < max_attempts) AS visible,
        count(*) FILTER (WHERE attempts >= max_attempts) AS dead
      FROM {T} WHERE queue = {QUEUE} AND state = 3 AND due <= {NOW}) AS x,
    (SELECT count(*) AS dead FROM (SELECT 1 FROM {T} WHERE queue = {QUEUE} AND state = 4 ORDER BY id) AS r) AS d,
    (SELECT count(*) AS completed FROM (SELECT 1 FROM {T} WHERE queue = {QUEUE} AND state = 5 ORDER BY id) AS r) AS f,
    (SELECT count(*) AS cancelled FROM (SELECT 1 FROM {T} WHERE queue = {QUEUE} AND state = 6 ORDER BY id) AS r) AS g)`

// lostEntry is the history entry of a claim whose lease expired, written
// with the row's old values (in an UPDATE's SET).
const lostEntry = `jsonb_build_array(jsonb_build_object('a', t.attempts, 'o', t.owner,
  't', (extract(epoch FROM t.due) * 1000000)::bigint, 'r', 'lease expired', 'l', true))`

// wake is the notification that a queue of the row may have a claimable
// item, as an expression that is never NULL, so that a statement can carry
// it in a column.
const wake = `(pg_notify('lease_claim_' || t.tableoid::bigint, 'q' || t.queue) IS NULL)`

// completeStatement is the part of the settle statement that ends the
// claims completed (how = 1) among the live ones: deleted, or kept as
// completed rows.
func completeStatement(keep bool) string {
	if keep {
		return `UPDATE {T} AS t SET state = 5, finished_at = now(), owner = NULL
  FROM live AS l WHERE t.id = l.id AND l.how = 1
  RETURNING l.n`
	}
	return `DELETE FROM {T} AS t USING live AS l
  WHERE t.id = l.id AND l.how = 1
  RETURNING l.n`
}

// cancelStatement cancels the item $2 of queue $1, deleting it or keeping
// it as a cancelled row, and returns its state before; a live claim's end
// is notified ("c" ID ":" token) for the store that made it. A finished
// item is left as it is.
func cancelStatement(keep bool) string {
	if !keep {
		return `WITH gone AS (
  DELETE FROM {T} AS t WHERE t.id = $2 AND t.queue = $1
  RETURNING t.id, t.token, t.state = 3 AND t.due > now() AS live, t.tableoid
)
SELECT id, token, live, CASE WHEN live THEN pg_notify('lease_claim_' || tableoid::bigint, 'c' || id || ':' || token) IS NULL END
FROM gone`
	}
	return `WITH old AS MATERIALIZED (
  SELECT t.id, t.token, t.state, t.state = 3 AND t.due > now() AS live, t.tableoid
  FROM {T} AS t WHERE t.id = $2 AND t.queue = $1
  FOR UPDATE
),
gone AS (
  UPDATE {T} AS t SET state = 6, finished_at = now(), owner = NULL, dead_at = NULL
  FROM old WHERE t.id = old.id AND old.state NOT IN (5, 6)
  RETURNING t.id
)
SELECT id, token, live, CASE WHEN live THEN pg_notify('lease_claim_' || tableoid::bigint, 'c' || id || ':' || token) IS NULL END
FROM old`
}

func newClaimStatements(table, migrations, queues string, keep claim.Retention) claimStatements {
	r := strings.NewReplacer("{T}", table, "{M}", migrations, "{Q}", queues, "{COLS}", claimColumns,
		"{RCOLS}", strings.ReplaceAll(claimColumns, "now()", readNow), "{RSTATE}", strings.ReplaceAll(effectiveState, "now()", readNow),
		"{CLOCK}", readClock,
		"{STATE}", effectiveState, "{TSTATE}", rowState, "{LOST}", lostEntry, "{WAKE}", wake,
		"{CLAIMBYID}", strings.ReplaceAll(claimByID, "{T}", table), "{COUNTS}", strings.NewReplacer("{T}", table, "{QUEUE}", "$1", "{NOW}", readNow).Replace(countsOf),
		"{NCOUNTS}", strings.NewReplacer("{T}", table, "{QUEUE}", "n.queue", "{NOW}", readNow).Replace(countsOf))
	s := claimStatements{
		// $1 queues, $2 keys (NULL for none), $3 payloads, $4 delays in µs,
		// $5 max attempts, $6 priorities, $7 timeouts in µs, $8 the table,
		// quoted, $9 kinds, $10 tags (JSON arrays), $11 metadata, $12 the
		// states that block each item's key (bit 1 << claim.State; 0 for
		// every state): the first item of the statement with a key
		// releases it from an item in another state, which stays without
		// it, before the insert (which reads released to be sure of it). IDs are drawn in input order before the insert, so that
		// each input learns its ID whether or not it was inserted, and IDs
		// follow the enqueue order. An input whose key exists (in the
		// table, or earlier in the batch) is not inserted; the statement
		// returns its position with a NULL ID, and existing finds it. Each
		// queue with an item visible at once is notified once.
		enqueue: r.Replace(`WITH seq AS MATERIALIZED (
  SELECT pg_get_serial_sequence($8, 'id')::regclass AS s
),
input AS MATERIALIZED (
  SELECT nextval(seq.s) AS id, u.*
  FROM unnest((SELECT $1::text[]), (SELECT $2::text[]), (SELECT $3::bytea[]), (SELECT $4::bigint[]),
      (SELECT $5::int[]), (SELECT $6::int[]), (SELECT $7::bigint[]), (SELECT $9::text[]), (SELECT $10::text[]),
      (SELECT $11::bytea[]), (SELECT $12::int[]))
    WITH ORDINALITY AS u(queue, key, payload, delay_us, max_attempts, priority, timeout_us, kind, tags, metadata, states, n)
  CROSS JOIN seq
),
released AS (
  UPDATE {T} AS t SET key = NULL
  FROM (SELECT DISTINCT ON (queue, key) queue, key, states FROM input WHERE key IS NOT NULL ORDER BY queue, key, n) AS i
  WHERE i.states <> 0 AND t.queue = i.queue AND t.key = i.key AND i.states & (1 << {TSTATE}) = 0
  RETURNING t.id
),
ins AS (
  INSERT INTO {T} AS t (id, queue, kind, tags, metadata, key, payload, state, attempts, max_attempts, priority, timeout_us, enqueued_at, due)
  SELECT id, queue, kind, tags::jsonb, metadata, key, payload, 1, 0, max_attempts, priority, timeout_us, now(),
    now() + delay_us * interval '1 microsecond'
  FROM input CROSS JOIN (SELECT count(*) FROM released) AS r ORDER BY n
  ON CONFLICT (queue, key) WHERE key IS NOT NULL DO NOTHING
  RETURNING t.id, t.queue, t.due, t.tableoid
),
woke AS (
  SELECT count(pg_notify('lease_claim_' || w.tableoid::bigint, 'q' || w.queue)) AS queues
  FROM (SELECT DISTINCT tableoid, queue FROM ins WHERE due <= now()) AS w
)
SELECT i.n, ins.id, ins.due, now(), woke.queues
FROM input AS i LEFT JOIN ins ON ins.id = i.id CROSS JOIN woke`),

		// $1 queues, $2 keys: the items holding those keys.
		existing: r.Replace(`SELECT {COLS} FROM {T}
WHERE key IS NOT NULL AND (queue, key) IN (SELECT * FROM unnest($1::text[], $2::text[]))`),

		// $1 queue; $2 owners, $3 leases in µs, $4 the number of the first
		// row of each (1, then 1 plus the limits so far): one entry per
		// Claim call sharing the statement; $5 the sum of the limits; $6
		// the table, quoted, whose paused queues hand out nothing.
		// Claimable: waiting and due, or claimed with an expired lease,
		// each found through an index of its own state, so that neither
		// search walks the other's rows (nor the dead index entries a
		// burn-down leaves of them). Both searches lock up to the limit;
		// the rows beyond it in claim order, locked only when expired
		// claims are met, are left as they were. The rows taken are numbered in claim order and dealt out in that
		// order, the first call's limit first (width_bucket finds a row's
		// call). An expired claim on its last attempt goes to the dead
		// letters instead of being claimed (state 4 in the result, which
		// the caller drops); either way its loss joins the history. SET
		// reads the row's old values. Returns each row's call (1-based)
		// and number.
		//
		// The planner sees neither the queue nor the limit (see
		// claimStatements), so it guesses how many rows are taken: the
		// rows updated are found by primary key from the list of those
		// taken (id = ANY), since with the guess alone it joined them to
		// a scan of the whole table.
		claim: r.Replace(`WITH waiting AS (
  SELECT id, due, priority FROM {T}
  WHERE queue = (SELECT $1::text) AND state = 1 AND due <= now()
    AND NOT EXISTS (SELECT FROM {Q} AS p WHERE p.target = (SELECT $6::text) AND p.queue = (SELECT $1::text))
  ORDER BY priority, due, id
  LIMIT (SELECT $5::bigint)
  FOR UPDATE SKIP LOCKED
),
expired AS (
  SELECT id, due, priority FROM {T}
  WHERE queue = (SELECT $1::text) AND state = 3 AND due <= now()
    AND NOT EXISTS (SELECT FROM {Q} AS p WHERE p.target = (SELECT $6::text) AND p.queue = (SELECT $1::text))
  ORDER BY priority, due, id
  LIMIT (SELECT $5::bigint)
  FOR UPDATE SKIP LOCKED
),
locked AS (SELECT * FROM waiting UNION ALL SELECT * FROM expired),
picked AS MATERIALIZED (
  SELECT l.id, l.rn, width_bucket(l.rn, $4::bigint[]) AS i
  FROM (SELECT id, row_number() OVER (ORDER BY priority, due, id) AS rn FROM locked) AS l
  WHERE l.rn <= (SELECT $5::bigint)
)
UPDATE {T} AS t SET
  state = CASE WHEN t.state = 3 AND t.attempts >= t.max_attempts THEN 4 ELSE 3 END,
  attempts = CASE WHEN t.state = 3 AND t.attempts >= t.max_attempts THEN t.attempts ELSE t.attempts + 1 END,
  token = t.token + 1,
  owner = CASE WHEN t.state = 3 AND t.attempts >= t.max_attempts THEN t.owner ELSE ($2::text[])[p.i] END,
  due = CASE WHEN t.state = 3 AND t.attempts >= t.max_attempts THEN t.due
    ELSE now() + ($3::bigint[])[p.i] * interval '1 microsecond' END,
  dead_at = CASE WHEN t.state = 3 AND t.attempts >= t.max_attempts THEN t.due END,
  history = CASE WHEN t.state = 3 THEN t.history || {LOST} ELSE t.history END
FROM picked AS p
WHERE t.id = p.id AND t.id = ANY (ARRAY(SELECT id FROM picked))
RETURNING p.i, p.rn, t.id, t.state, t.attempts, t.max_attempts, t.priority, t.timeout_us, t.enqueued_at, t.due, t.token, t.payload, t.kind, t.tags::text, t.metadata`),

		// $1 IDs, $2 tokens, $3 leases in µs; each ID once. Returns the
		// position and new expiry of each claim that was live. Rows are
		// locked in ID order, as settle locks them, so that batches over
		// the same rows cannot deadlock.
		extend: r.Replace(`WITH live AS MATERIALIZED (
  SELECT t.id, i.n, i.lease_us
  FROM (SELECT * FROM unnest((SELECT $1::bigint[]), (SELECT $2::bigint[]), (SELECT $3::bigint[])) WITH ORDINALITY AS u(id, token, lease_us, n)
    ORDER BY id) AS i
  CROSS JOIN LATERAL ({CLAIMBYID}) AS t
)
UPDATE {T} AS t SET due = now() + l.lease_us * interval '1 microsecond'
FROM live AS l
WHERE t.id = l.id
RETURNING l.n, t.due`),

		// $1 IDs, $2 tokens, $3 hows, $4 delays in µs, $5 reasons; each ID
		// once. Returns the position of each claim that was live, which is
		// then settled, and its queue unless it was completed. A retry or snooze with no delay wakes the queue's
		// waiters when the batch commits.
		settle: r.Replace(strings.Replace(`WITH live AS MATERIALIZED (
  SELECT t.id, i.n, i.how, i.after_us, i.reason
  FROM (SELECT * FROM unnest((SELECT $1::bigint[]), (SELECT $2::bigint[]), (SELECT $3::int[]), (SELECT $4::bigint[]), (SELECT $5::text[]))
      WITH ORDINALITY AS u(id, token, how, after_us, reason, n)
    ORDER BY id) AS i
  CROSS JOIN LATERAL ({CLAIMBYID}) AS t
),
done AS ({DONE}),
moved AS (
  UPDATE {T} AS t SET
    state = CASE WHEN l.how = 3 THEN 4 ELSE 1 END,
    attempts = CASE WHEN l.how = 4 THEN t.attempts - 1 ELSE t.attempts END,
    due = CASE WHEN l.how = 3 THEN t.due ELSE now() + l.after_us * interval '1 microsecond' END,
    dead_at = CASE WHEN l.how = 3 THEN now() END,
    owner = NULL,
    history = CASE WHEN l.how = 4 THEN t.history
      ELSE t.history || jsonb_build_array(jsonb_build_object('a', t.attempts, 'o', t.owner,
        't', (extract(epoch FROM now()) * 1000000)::bigint, 'r', l.reason)) END
  FROM live AS l
  WHERE t.id = l.id AND l.how <> 1
  RETURNING l.n, t.queue, CASE WHEN l.how IN (2, 4) AND l.after_us = 0 THEN {WAKE} END AS woke
)
SELECT n, NULL::text FROM done UNION ALL SELECT n, queue FROM moved`, "{DONE}", completeStatement(keep.Completed > 0), 1)),

		// $1 queue, $2 ID. Returns the deleted row's state as of now; a
		// live claim's end is notified ("c" ID ":" token) for the store
		// that made it.
		cancel: r.Replace(cancelStatement(keep.Cancelled > 0)),

		// $1 IDs, $2 tokens, $3 expiries (the database's) of claims: the
		// claims whose item is gone although their lease has not run out,
		// so that it was removed while they were live (IDs are never
		// reused; a claim that expired and whose item was then claimed
		// again and completed is not one of them).
		removedLive: r.Replace(`SELECT i.id, i.token
FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[]) AS i(id, token, expires)
WHERE i.expires > now() AND NOT EXISTS (SELECT FROM {T} AS t WHERE t.id = i.id AND t.state <> 6)`),

		// $1 queue, $2 ID: a dead item, or a claim on its last attempt whose
		// lease expired (whose loss joins the history), made visible with
		// no attempts used.
		requeueDead: r.Replace(`WITH up AS (
  UPDATE {T} AS t SET
    state = 1, attempts = 0, due = now(), dead_at = NULL, owner = NULL,
    history = CASE WHEN t.state = 3 THEN t.history || {LOST} ELSE t.history END
  WHERE t.id = $2 AND t.queue = $1
    AND (t.state = 4 OR (t.state = 3 AND t.due <= now() AND t.attempts >= t.max_attempts))
  RETURNING t.*, {WAKE} AS woke
)
SELECT {COLS} FROM up`),

		// $1 queue, $2 ID: a waiting item (visible, or delayed by its
		// enqueue's Delay or a backoff) made visible now; a visible one
		// keeps its place.
		retryNow: r.Replace(`WITH up AS (
  UPDATE {T} AS t SET due = LEAST(t.due, now())
  WHERE t.id = $2 AND t.queue = $1 AND t.state = 1
  RETURNING t.*, {WAKE} AS woke
)
SELECT {COLS} FROM up`),

		// $1 queue, $2 ID.
		deleteDead: r.Replace(`DELETE FROM {T} WHERE id = $2 AND queue = $1 AND {STATE} = 4`),

		lookup: r.Replace(`WITH {CLOCK} SELECT {RCOLS} FROM {T} WHERE id = $1`),

		// $1 queue, $2 state (0 for all), $3 after, $4 limit, $5 kind
		// ("" for all), $6 tag ("" for all). Each stored state is
		// searched on its own, through the index over its rows, for the
		// first rows after $3 in ID order, and only if it can hold
		// items in state $2 (a claim whose lease expired is visible or
		// dead); the first $4 of those are read. Searched as one, by the
		// primary key, a page of dead letters or of a small queue walked
		// every row of the table before it. Waiting items and claims are
		// the newest rows, behind every finished one in ID order, so
		// their searches (fenced by OFFSET 0) read the queue's entries in
		// the claim indexes and sort them, which costs what Counts does
		// for them, rather than walking the primary key through the
		// history, which the planner may expect to be quicker.
		list: r.Replace(`WITH {CLOCK}
SELECT {RCOLS} FROM {T}
WHERE id = ANY (ARRAY(
  SELECT u.id FROM (
    (SELECT id FROM (SELECT id FROM {T} WHERE $2 IN (0, 1, 2) AND queue = $1 AND state = 1 AND id > $3
        AND ($2 = 0 OR {RSTATE} = $2) AND ($5 = '' OR kind = $5) AND ($6 = '' OR tags @> jsonb_build_array($6::text))
        OFFSET 0) AS w
      ORDER BY id LIMIT $4)
    UNION ALL
    (SELECT id FROM (SELECT id FROM {T} WHERE $2 IN (0, 1, 3, 4) AND queue = $1 AND state = 3 AND id > $3
        AND ($2 = 0 OR {RSTATE} = $2) AND ($5 = '' OR kind = $5) AND ($6 = '' OR tags @> jsonb_build_array($6::text))
        OFFSET 0) AS c
      ORDER BY id LIMIT $4)
    UNION ALL
    (SELECT id FROM {T} WHERE $2 IN (0, 4) AND queue = $1 AND state = 4 AND id > $3
      AND ($5 = '' OR kind = $5) AND ($6 = '' OR tags @> jsonb_build_array($6::text)) ORDER BY id LIMIT $4)
    UNION ALL
    (SELECT id FROM {T} WHERE $2 IN (0, 5) AND queue = $1 AND state = 5 AND id > $3
      AND ($5 = '' OR kind = $5) AND ($6 = '' OR tags @> jsonb_build_array($6::text)) ORDER BY id LIMIT $4)
    UNION ALL
    (SELECT id FROM {T} WHERE $2 IN (0, 6) AND queue = $1 AND state = 6 AND id > $3
      AND ($5 = '' OR kind = $5) AND ($6 = '' OR tags @> jsonb_build_array($6::text)) ORDER BY id LIMIT $4)
  ) AS u
  ORDER BY u.id LIMIT $4))
ORDER BY id`),

		// $1 queue.
		counts: r.Replace(`WITH {CLOCK} SELECT * FROM {COUNTS} AS k`),

		// $1, $2, $3 the retention of completed, cancelled and dead items
		// in µs (0 for dead: kept, as a NULL time before which nothing
		// is), $4 the limit, $5 the table, quoted.
		// Only the transaction holding the table's cleaning lock deletes:
		// the others find the lock taken and delete nothing. Each state
		// gives its oldest rows first, by the index on its finishing time;
		// an expired claim on its last attempt is a dead letter since its
		// lease's end. Its transaction commits without waiting for the
		// log to reach the disk (SET LOCAL synchronous_commit = off): a
		// delete lost in a crash is redone by the next Clean, and the
		// claims sharing the log do not wait behind its flushes.
		clean: r.Replace(`WITH arg AS MATERIALIZED (
  SELECT now() - $1::bigint * interval '1 microsecond' AS done_before,
    now() - $2::bigint * interval '1 microsecond' AS gone_before,
    CASE WHEN $3::bigint > 0 THEN now() - $3::bigint * interval '1 microsecond' END AS dead_before
),
lock AS MATERIALIZED (
  SELECT pg_try_advisory_xact_lock(1818977646, hashtext($5)) AS got,
    set_config('synchronous_commit', 'off', true) AS sync
),
doomed AS MATERIALIZED (
  (SELECT ctid FROM {T} WHERE state = 5 AND finished_at <= (SELECT done_before FROM arg)
    AND (SELECT got FROM lock) ORDER BY finished_at LIMIT $4)
  UNION ALL
  (SELECT ctid FROM {T} WHERE state = 6 AND finished_at <= (SELECT gone_before FROM arg)
    AND (SELECT got FROM lock) ORDER BY finished_at LIMIT $4)
  UNION ALL
  (SELECT ctid FROM {T} WHERE state = 4 AND dead_at <= (SELECT dead_before FROM arg)
    AND (SELECT got FROM lock) ORDER BY dead_at LIMIT $4)
  UNION ALL
  (SELECT ctid FROM {T} WHERE state = 3 AND attempts >= max_attempts AND due <= (SELECT dead_before FROM arg)
    AND (SELECT got FROM lock) LIMIT $4)
  LIMIT $4
)
DELETE FROM {T} AS t
WHERE t.ctid = ANY (ARRAY(SELECT ctid FROM doomed))
  AND CASE t.state WHEN 5 THEN t.finished_at <= (SELECT done_before FROM arg)
    WHEN 6 THEN t.finished_at <= (SELECT gone_before FROM arg)
    WHEN 4 THEN t.dead_at <= (SELECT dead_before FROM arg)
    WHEN 3 THEN t.attempts >= t.max_attempts AND t.due <= (SELECT dead_before FROM arg)
    ELSE false END`),

		// $1 the table, quoted.
		oid: `SELECT $1::text::regclass::oid::bigint`,

		// $1 the table, quoted, $2 the queue. A row is a paused queue.
		pause: r.Replace(`INSERT INTO {Q} (target, queue, paused_at) VALUES ($1, $2, now())
ON CONFLICT (target, queue) DO NOTHING`),
		// Likewise; the queue's waiters, in every process, are woken.
		resume: r.Replace(`WITH gone AS (DELETE FROM {Q} WHERE target = $1 AND queue = $2 RETURNING queue)
SELECT count(pg_notify('lease_claim_' || $1::text::regclass::oid::bigint, 'q' || queue)) FROM gone`),
		// $1 the table, quoted, $2 after, $3 limit: the queues with rows or
		// paused, in byte order, with their counts and pause. The names
		// are found by skipping from one queue to the next in each index
		// that leads with the queue (one search per queue and index, in
		// the index's collation), then sorted in byte order; each queue
		// listed is counted as Counts counts it.
		queues: r.Replace(`WITH RECURSIVE {CLOCK},
waiting AS (
  (SELECT queue FROM {T} WHERE state = 1 ORDER BY queue LIMIT 1)
  UNION ALL
  SELECT (SELECT t.queue FROM {T} AS t WHERE t.state = 1 AND t.queue > w.queue ORDER BY t.queue LIMIT 1)
  FROM waiting AS w WHERE w.queue IS NOT NULL
),
claimed AS (
  (SELECT queue FROM {T} WHERE state = 3 ORDER BY queue LIMIT 1)
  UNION ALL
  SELECT (SELECT t.queue FROM {T} AS t WHERE t.state = 3 AND t.queue > c.queue ORDER BY t.queue LIMIT 1)
  FROM claimed AS c WHERE c.queue IS NOT NULL
),
kept AS (
  (SELECT queue FROM {T} WHERE state IN (4, 5, 6) ORDER BY queue LIMIT 1)
  UNION ALL
  SELECT (SELECT t.queue FROM {T} AS t WHERE t.state IN (4, 5, 6) AND t.queue > k.queue ORDER BY t.queue LIMIT 1)
  FROM kept AS k WHERE k.queue IS NOT NULL
),
names AS MATERIALIZED (
  SELECT u.queue FROM (
    SELECT queue FROM waiting UNION SELECT queue FROM claimed UNION SELECT queue FROM kept
    UNION SELECT queue FROM {Q} WHERE target = $1
  ) AS u
  WHERE u.queue COLLATE "C" > $2
  ORDER BY u.queue COLLATE "C" LIMIT $3
)
SELECT n.queue, k.*, p.paused_at
FROM names AS n
CROSS JOIN LATERAL {NCOUNTS} AS k
LEFT JOIN {Q} AS p ON p.target = $1 AND p.queue = n.queue
ORDER BY n.queue COLLATE "C"`),

		migrations: r.Replace(`CREATE TABLE IF NOT EXISTS {M} (
  target     text        NOT NULL,
  version    int         NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (target, version)
)`),
		// $1 the target table, quoted.
		migrated:      r.Replace(`SELECT coalesce(max(version), 0) FROM {M} WHERE target = $1`),
		markMigration: r.Replace(`INSERT INTO {M} (target, version) VALUES ($1, $2)`),
	}
	s.v1 = []string{
		// due is when a waiting item becomes claimable, or when a claim's
		// lease expires; token counts the item's claims and is never
		// reset, so each claim has one no earlier claim had. history is a
		// JSON array of failures.
		r.Replace(`CREATE TABLE {T} (
  id           bigint      GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  queue        text        NOT NULL,
  key          text,
  payload      bytea,
  state        smallint    NOT NULL CHECK (state IN (1, 3, 4)),
  attempts     int         NOT NULL DEFAULT 0,
  max_attempts int         NOT NULL CHECK (max_attempts > 0),
  priority     smallint    NOT NULL,
  timeout_us   bigint      NOT NULL DEFAULT 0,
  enqueued_at  timestamptz NOT NULL,
  due          timestamptz NOT NULL,
  token        bigint      NOT NULL DEFAULT 0,
  owner        text,
  dead_at      timestamptz,
  history      jsonb       NOT NULL DEFAULT '[]'
)`),
		// The claim order, over the rows a Claim may take.
		fmt.Sprintf(`CREATE INDEX ON %s (queue, priority, due, id) WHERE state IN (1, 3)`, table),
		fmt.Sprintf(`CREATE UNIQUE INDEX ON %s (queue, key) WHERE key IS NOT NULL`, table),
		fmt.Sprintf(`CREATE INDEX ON %s (queue, id) WHERE state = 4`, table),
	}
	s.v3 = []string{
		// The paused queues of every claim table of the schema, by table.
		r.Replace(`CREATE TABLE IF NOT EXISTS {Q} (
  target    text        NOT NULL,
  queue     text        NOT NULL,
  paused_at timestamptz NOT NULL,
  PRIMARY KEY (target, queue)
)`),
	}
	s.v4 = []string{
		// tags is a JSON array of strings; metadata is the caller's bytes.
		r.Replace(`ALTER TABLE {T}
  ADD COLUMN tags jsonb NOT NULL DEFAULT '[]',
  ADD COLUMN metadata bytea`),
	}
	s.v5 = claimIndexStatements(table)
	s.v6 = claimHistoryStatements(table)
	// In the caller's transaction now() is when it began: a claim is live
	// if its lease has not expired when the statement runs.
	s.settleTx = strings.ReplaceAll(s.settle, "now()", "statement_timestamp()")
	s.v2 = []string{
		// kind names what an item is; finished_at is when a completed or
		// cancelled item (states 5 and 6) finished, the start of its
		// retention. The claim index stays partial on the claimable
		// states, so finished rows, however many, never slow a claim.
		r.Replace(`ALTER TABLE {T}
  ADD COLUMN kind text NOT NULL DEFAULT '',
  ADD COLUMN finished_at timestamptz,
  ADD CHECK (state IN (1, 3, 4, 5, 6))`),
		// The cleaner's order, over the rows it may delete.
		fmt.Sprintf(`CREATE INDEX ON %s (finished_at) WHERE state IN (5, 6)`, table),
		fmt.Sprintf(`CREATE INDEX ON %s (dead_at) WHERE state = 4`, table),
	}
	return s
}
