package sqlite

import "strings"

// The values of the state column are sqlclaim's (sqlclaim.RowWaiting and
// the others), written into the statements as numbers.

// Every statement takes now, in nanoseconds since the Unix epoch on the
// store's clock, as the parameter :now.

// claimColumns are the columns itemRow scans.
const claimColumns = `id, queue, kind, key, payload, state, attempts, max_attempts, priority, timeout_ns,
  enqueued_at, due, owner, dead_at, finished_at, history, tags, metadata`

// effectiveState is the claim.State of a row as of :now.
const effectiveState = `(CASE WHEN state IN (4, 5, 6) THEN state
  WHEN state = 3 AND due > :now THEN 3
  WHEN state = 3 AND attempts >= max_attempts THEN 4
  WHEN due <= :now THEN 1
  ELSE 2 END)`

// lostEntry is the history entry of a claim whose lease ended unsettled,
// written with the row's values before the update.
const lostEntry = `json_insert(history, '$[#]', json_object('a', attempts, 'o', owner, 't', due,
  'r', 'lease expired', 'l', json('true')))`

// liveCounts are the counts of live rows (states 1 and 3) by their
// claim.State as of :now, named as sqlCounts and sqlQueues read them.
const liveCounts = `coalesce(sum({STATE} = 1), 0) AS visible, coalesce(sum({STATE} = 2), 0) AS delayed,
  coalesce(sum({STATE} = 3), 0) AS claimed, coalesce(sum({STATE} = 4), 0) AS dead`

// keptCounts are the counts of kept rows (states 4, 5 and 6), which read
// state alone, so that lease_claims_kept covers them.
const keptCounts = `coalesce(sum(state = 4), 0) AS dead, coalesce(sum(state = 5), 0) AS completed,
  coalesce(sum(state = 6), 0) AS cancelled`

var claimSQL = strings.NewReplacer("{COLS}", claimColumns, "{STATE}", effectiveState, "{LOST}", lostEntry,
	"{LIVE}", strings.ReplaceAll(liveCounts, "{STATE}", effectiveState), "{KEPT}", keptCounts)

var (
	sqlInsert = `INSERT INTO lease_claims (queue, kind, key, payload, state, max_attempts, priority, timeout_ns,
  enqueued_at, due, tags, metadata)
VALUES (:queue, :kind, :key, :payload, 1, :max, :prio, :timeout, :now, :due, :tags, :metadata)
ON CONFLICT (queue, key) WHERE key IS NOT NULL DO NOTHING
RETURNING id`
	sqlByKey = claimSQL.Replace(`SELECT {COLS} FROM lease_claims WHERE queue = :queue AND key = :key`)
	// An item whose state does not block a new item's key gives it up.
	sqlReleaseKey = `UPDATE lease_claims SET key = NULL WHERE id = :id`

	// The next claimable rows of a queue, in claim order; none while the
	// queue is paused.
	sqlClaimable = `SELECT id, state, attempts, max_attempts FROM lease_claims
WHERE queue = :queue AND state IN (1, 3) AND due <= :now
  AND NOT EXISTS (SELECT 1 FROM lease_claim_queues WHERE queue = :queue)
ORDER BY priority, due, id LIMIT :limit`
	// An expired claim on its last attempt goes to the dead letters, its
	// loss in the history.
	sqlBury = claimSQL.Replace(`UPDATE lease_claims SET state = 4, dead_at = due, token = token + 1,
  history = {LOST} WHERE id = :id`)
	sqlTake = claimSQL.Replace(`UPDATE lease_claims SET
  history = CASE WHEN state = 3 THEN {LOST} ELSE history END,
  state = 3, attempts = attempts + 1, token = token + 1, owner = :owner, due = :due
WHERE id = :id
RETURNING attempts, max_attempts, priority, timeout_ns, enqueued_at, token, payload, kind, tags, metadata`)

	// A claim of one item in one statement: the next claimable row of the
	// queue, taken as sqlTake takes it, unless it is an expired claim on
	// its last attempt (which the claim then buries, see
	// dialect.Claim).
	sqlTakeNext = claimSQL.Replace(`UPDATE lease_claims SET
  history = CASE WHEN state = 3 THEN {LOST} ELSE history END,
  state = 3, attempts = attempts + 1, token = token + 1, owner = :owner, due = :due
WHERE id = (SELECT id FROM lease_claims
    WHERE queue = :queue AND state IN (1, 3) AND due <= :now
      AND NOT EXISTS (SELECT 1 FROM lease_claim_queues WHERE queue = :queue)
    ORDER BY priority, due, id LIMIT 1)
  AND NOT (state = 3 AND attempts >= max_attempts)
RETURNING id, attempts, max_attempts, priority, timeout_ns, enqueued_at, token, payload, kind, tags, metadata`)

	sqlExtend = `UPDATE lease_claims SET due = :due
WHERE id = :id AND token = :token AND state = 3 AND due > :now
RETURNING due`

	sqlComplete = `DELETE FROM lease_claims WHERE id = :id AND token = :token AND state = 3 AND due > :now`
	// A completed item kept for its retention.
	sqlCompleteKeep = `UPDATE lease_claims SET state = 5, finished_at = :now, owner = NULL
WHERE id = :id AND token = :token AND state = 3 AND due > :now`
	// :how 2 retry, 3 dead, 4 snooze.
	sqlMove = `UPDATE lease_claims SET
  history = CASE WHEN :how = 4 THEN history
    ELSE json_insert(history, '$[#]', json_object('a', attempts, 'o', owner, 't', :now, 'r', :reason)) END,
  state = CASE WHEN :how = 3 THEN 4 ELSE 1 END,
  attempts = CASE WHEN :how = 4 THEN attempts - 1 ELSE attempts END,
  due = CASE WHEN :how = 3 THEN due ELSE :due END,
  dead_at = CASE WHEN :how = 3 THEN :now END,
  owner = NULL
WHERE id = :id AND token = :token AND state = 3 AND due > :now`

	// The item Cancel finds: its token, its state, and whether its claim
	// is live.
	sqlCancelFind = `SELECT token, state, state = 3 AND due > :now FROM lease_claims WHERE id = :id AND queue = :queue`
	sqlCancel     = `DELETE FROM lease_claims WHERE id = :id`
	// A cancelled item kept for its retention.
	sqlCancelKeep = `UPDATE lease_claims SET state = 6, finished_at = :now, owner = NULL, dead_at = NULL WHERE id = :id`

	// Up to :limit finished rows whose retention has passed: completed
	// (:done ns after finishing), cancelled (:gone), then dead letters
	// (:dead after their death; 0 keeps them), each state oldest first by
	// its index. A claim on its last attempt whose lease ended is a dead
	// letter since that end.
	sqlClean = `DELETE FROM lease_claims WHERE id IN (
  SELECT id FROM (SELECT id FROM lease_claims WHERE state = 5 AND finished_at <= :now - :done
    ORDER BY finished_at, id LIMIT :limit)
  UNION ALL
  SELECT id FROM (SELECT id FROM lease_claims WHERE state = 6 AND finished_at <= :now - :gone
    ORDER BY finished_at, id LIMIT :limit)
  UNION ALL
  SELECT id FROM (SELECT id FROM lease_claims WHERE state = 4 AND :dead > 0 AND dead_at <= :now - :dead
    ORDER BY dead_at, id LIMIT :limit)
  UNION ALL
  SELECT id FROM (SELECT id FROM lease_claims WHERE state = 3 AND :dead > 0 AND attempts >= max_attempts
    AND due <= :now - :dead ORDER BY due, id LIMIT :limit)
  LIMIT :limit)`

	// A dead item, or a claim on its last attempt whose lease ended (its
	// loss joins the history), made visible with no attempts used.
	sqlRequeueDead = claimSQL.Replace(`UPDATE lease_claims SET
  history = CASE WHEN state = 3 THEN {LOST} ELSE history END,
  state = 1, attempts = 0, due = :now, dead_at = NULL, owner = NULL
WHERE id = :id AND queue = :queue
  AND (state = 4 OR (state = 3 AND due <= :now AND attempts >= max_attempts))
RETURNING {COLS}`)

	sqlDeleteDead = claimSQL.Replace(`DELETE FROM lease_claims WHERE id = :id AND queue = :queue AND {STATE} = 4`)

	sqlLookup = claimSQL.Replace(`SELECT {COLS} FROM lease_claims WHERE id = :id`)

	sqlList = claimSQL.Replace(`SELECT {COLS} FROM lease_claims
WHERE queue = :queue AND id > :after AND (:state = 0 OR {STATE} = :state) AND (:kind = '' OR kind = :kind)
  AND (:tag = '' OR EXISTS (SELECT 1 FROM json_each(tags) WHERE value = :tag))
ORDER BY id LIMIT :limit`)

	// The counts of :queue: its live rows read through the claim index,
	// its kept rows counted in lease_claims_kept without reading them.
	sqlCounts = claimSQL.Replace(`SELECT l.visible, l.delayed, l.claimed, l.dead + k.dead, k.completed, k.cancelled
FROM (SELECT {LIVE} FROM lease_claims WHERE queue = :queue AND state IN (1, 3)) AS l,
  (SELECT {KEPT} FROM lease_claims WHERE queue = :queue AND state IN (4, 5, 6)) AS k`)

	// A row of lease_claim_queues is a paused queue.
	sqlPause  = `INSERT INTO lease_claim_queues (queue, paused_at) VALUES (:queue, :now) ON CONFLICT (queue) DO NOTHING`
	sqlResume = `DELETE FROM lease_claim_queues WHERE queue = :queue`
	// The queues with rows or paused, in byte order (SQLite's BINARY
	// collation), a page of :limit above :after, with their counts and
	// pause. The names of the queues with rows are found by stepping from
	// one to the next in the claim index and in lease_claims_kept, a
	// search each, rather than by reading the rows between; each queue
	// listed is counted as Counts counts it.
	sqlQueues = claimSQL.Replace(`WITH RECURSIVE live(queue) AS (
  SELECT (SELECT queue FROM lease_claims WHERE state IN (1, 3) AND queue > :after ORDER BY queue LIMIT 1)
  UNION ALL
  SELECT (SELECT t.queue FROM lease_claims AS t WHERE t.state IN (1, 3) AND t.queue > l.queue ORDER BY t.queue LIMIT 1)
  FROM live AS l WHERE l.queue IS NOT NULL
  LIMIT :limit
),
kept(queue) AS (
  SELECT (SELECT queue FROM lease_claims WHERE state IN (4, 5, 6) AND queue > :after ORDER BY queue LIMIT 1)
  UNION ALL
  SELECT (SELECT t.queue FROM lease_claims AS t WHERE t.state IN (4, 5, 6) AND t.queue > k.queue ORDER BY t.queue LIMIT 1)
  FROM kept AS k WHERE k.queue IS NOT NULL
  LIMIT :limit
),
names AS (
  SELECT queue FROM live WHERE queue IS NOT NULL
  UNION SELECT queue FROM kept WHERE queue IS NOT NULL
  UNION SELECT queue FROM lease_claim_queues WHERE queue > :after
  ORDER BY queue LIMIT :limit
),
lc AS (
  SELECT queue, {LIVE} FROM lease_claims WHERE state IN (1, 3) AND queue IN (SELECT queue FROM names) GROUP BY queue
),
kc AS (
  SELECT queue, {KEPT} FROM lease_claims WHERE state IN (4, 5, 6) AND queue IN (SELECT queue FROM names) GROUP BY queue
)
SELECT n.queue, coalesce(l.visible, 0), coalesce(l.delayed, 0), coalesce(l.claimed, 0),
  coalesce(l.dead, 0) + coalesce(k.dead, 0), coalesce(k.completed, 0), coalesce(k.cancelled, 0), p.paused_at
FROM names AS n
LEFT JOIN lc AS l ON l.queue = n.queue
LEFT JOIN kc AS k ON k.queue = n.queue
LEFT JOIN lease_claim_queues AS p ON p.queue = n.queue
ORDER BY n.queue`)

	// The earliest instant after :now at which a row becomes due: a delay
	// that ends, or a lease.
	sqlNextDue = `SELECT coalesce(min(due), 0) FROM lease_claims WHERE state IN (1, 3) AND due > :now`
)
