package postgres

import (
	"fmt"
	"hash/fnv"
	"unicode/utf8"
)

// statements is the SQL a LockProvider runs, with its table and sequence names
// (already quoted by pgx.Identifier.Sanitize) filled in once by New.
//
// Time is always clock_timestamp(): the database's clock, read when the row
// is examined, after any wait for its row lock. A lease is expired from the
// instant expires_at is reached. A released lock has expires_at -infinity,
// which no lock delay can push into the future.
type statements struct {
	acquire    string
	renew      string
	renewOne   string
	release    string
	releaseOne string
	// holder and held are the Inspector's reads; remaining is how long,
	// in µs, until a held lock can be taken over without a release; oid
	// finds the table's OID, which names its notification channel.
	holder string
	held   string
	oid    string
	create string
	// The waiters' queue (wait.go): waitAcquire is an AcquireWait's
	// attempt, takeTicket queues a waiter, leaveQueue takes one out and
	// wakes the others, refreshTickets keeps the live ones fresh, and
	// createWaiters makes the table.
	waitAcquire    string
	takeTicket     string
	leaveQueue     string
	refreshTickets string
	createWaiters  []string
	// createSeq makes the sequence tokens are drawn from. Owned by the
	// token column, it is dropped with the table.
	createSeq string
}

func newStatements(table, seq, waiters string) statements {
	// held selects and locks the rows of a batch ($1 names, $2 execution
	// IDs, $3 tokens) that are still held by those leases, with their
	// 1-based position in the batch. It locks them in name order, so
	// concurrent batches over the same rows (a Renew racing a Release)
	// cannot deadlock. A batch of one lease locks one row and needs none of
	// this: the *One statements are a plain UPDATE.
	held := fmt.Sprintf(`WITH held AS MATERIALIZED (
  SELECT l.name, r.i FROM %[1]s AS l
  JOIN unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS r(name, execution_id, token, i)
    ON l.name = r.name AND l.execution_id = r.execution_id AND l.token = r.token
  WHERE l.expires_at > clock_timestamp()
  ORDER BY l.name
  FOR UPDATE OF l
)`, table)
	return statements{
		// $1 name, $2 execution ID, $3 duration in µs, $4 lock delay in µs,
		// $5 the token sequence. The conflict branch runs only when the
		// current lease is over. Its token is drawn after the row lock is
		// held, so it exceeds every token drawn before, the current holder's
		// included; GREATEST keeps the per-name order even if the sequence
		// were ever reset. The insert branch only runs for a name never seen.
		acquire: fmt.Sprintf(`INSERT INTO %[1]s AS l (name, execution_id, token, expires_at)
VALUES ($1, $2, nextval($5::text::regclass), clock_timestamp() + $3::bigint * interval '1 microsecond')
ON CONFLICT (name) DO UPDATE
SET execution_id = excluded.execution_id,
    token = GREATEST(nextval($5::text::regclass), l.token + 1),
    expires_at = clock_timestamp() + $3::bigint * interval '1 microsecond'
WHERE l.expires_at + $4::bigint * interval '1 microsecond' <= clock_timestamp()
RETURNING l.token, l.expires_at`, table),

		// $1 names, $2 execution IDs, $3 tokens, $4 duration in µs.
		renew: held + fmt.Sprintf(`
UPDATE %[1]s AS l
SET expires_at = clock_timestamp() + $4::bigint * interval '1 microsecond'
FROM held
WHERE l.name = held.name AND l.expires_at > clock_timestamp()
RETURNING held.i, l.expires_at`, table),

		// $1 name, $2 execution ID, $3 token, $4 duration in µs; returns
		// the lease's position like renew.
		renewOne: fmt.Sprintf(`UPDATE %[1]s AS l
SET expires_at = clock_timestamp() + $4::bigint * interval '1 microsecond'
WHERE l.name = $1 AND l.execution_id = $2 AND l.token = $3 AND l.expires_at > clock_timestamp()
RETURNING 1::bigint, l.expires_at`, table),

		// $1 names, $2 execution IDs, $3 tokens. The row stays, keeping its
		// last token as a floor for the next holder. Each freed name is
		// sent to the table's channel by the same statement, so the
		// notification is delivered exactly when the release commits.
		release: held + fmt.Sprintf(`,
freed AS (
  UPDATE %[1]s AS l
  SET expires_at = '-infinity'
  FROM held
  WHERE l.name = held.name
  RETURNING l.name, l.tableoid AS tbl
)
SELECT pg_notify(%[2]s, name) FROM freed`, table, notifyChannel),

		// $1 name, $2 execution ID, $3 token.
		releaseOne: fmt.Sprintf(`WITH freed AS (
  UPDATE %[1]s AS l
  SET expires_at = '-infinity'
  WHERE l.name = $1 AND l.execution_id = $2 AND l.token = $3 AND l.expires_at > clock_timestamp()
  RETURNING l.name, l.tableoid AS tbl
)
SELECT pg_notify(%[2]s, name) FROM freed`, table, notifyChannel),

		// $1 name. A lock held on the database's clock, as Acquire
		// decides it (without the lock delay, which holds nobody).
		holder: fmt.Sprintf(`SELECT execution_id, token, expires_at FROM %[1]s
WHERE name = $1 AND expires_at > clock_timestamp()`, table),

		// $1 prefix, $2 limit (NULL for all). starts_with matches the
		// prefix as plain text, so % _ and \ in it are not patterns. The C
		// collation sorts by bytes, as the memory provider does, whatever
		// the database's collation.
		held: fmt.Sprintf(`SELECT name, execution_id, token, expires_at FROM %[1]s
WHERE expires_at > clock_timestamp() AND starts_with(name, $1)
ORDER BY name COLLATE "C"
LIMIT $2`, table),

		// $1 name, $2 execution ID, $3 duration in µs, $4 lock delay in
		// µs, $5 the token sequence, $6 the waiter's ticket (0 before it
		// has one), $7 the tickets' time to live in µs. It is acquire,
		// taken only when no live ticket is ahead of $6 (none at all for
		// 0); taking the lock also removes the ticket, in the same
		// statement. It returns one row: the lease's token and expiry when
		// taken, else NULLs and, in µs on the database's clock, how long
		// until the holder's lease and lock delay are over (NULL when they
		// are) and until the last ticket ahead goes stale unless refreshed
		// (NULL when none is ahead).
		waitAcquire: fmt.Sprintf(`WITH ahead AS (
  SELECT count(*) AS n, max(seen_at) AS last FROM %[3]s
  WHERE name = $1 AND seen_at > clock_timestamp() - $7::bigint * interval '1 microsecond'
    AND ($6::bigint = 0 OR ticket < $6::bigint)
), took AS (
  INSERT INTO %[1]s AS l (name, execution_id, token, expires_at)
  SELECT $1, $2, nextval($5::text::regclass), clock_timestamp() + $3::bigint * interval '1 microsecond'
  FROM ahead WHERE ahead.n = 0
  ON CONFLICT (name) DO UPDATE
  SET execution_id = excluded.execution_id,
      token = GREATEST(nextval($5::text::regclass), l.token + 1),
      expires_at = clock_timestamp() + $3::bigint * interval '1 microsecond'
  WHERE l.expires_at + $4::bigint * interval '1 microsecond' <= clock_timestamp()
  RETURNING l.token, l.expires_at
), served AS (
  DELETE FROM %[3]s WHERE ticket = $6::bigint AND EXISTS (SELECT 1 FROM took)
)
SELECT took.token, took.expires_at, NULL::bigint, NULL::bigint FROM took
UNION ALL
SELECT NULL, NULL,
  (SELECT (extract(epoch FROM expires_at + $4::bigint * interval '1 microsecond' - clock_timestamp()) * 1000000)::bigint
   FROM %[1]s WHERE name = $1 AND expires_at > '-infinity'),
  (extract(epoch FROM ahead.last + $7::bigint * interval '1 microsecond' - clock_timestamp()) * 1000000)::bigint
FROM ahead WHERE NOT EXISTS (SELECT 1 FROM took)`, table, seq, waiters),

		// $1 name, $2 the tickets' time to live in µs. Tickets of the
		// name that went stale (their waiters died) are cleared on the way.
		takeTicket: fmt.Sprintf(`WITH dead AS (
  DELETE FROM %[1]s WHERE name = $1 AND seen_at <= clock_timestamp() - $2::bigint * interval '1 microsecond'
)
INSERT INTO %[1]s (name, seen_at) VALUES ($1, clock_timestamp()) RETURNING ticket`, waiters),

		// $1 ticket, $2 the lock table, quoted: the waiters still queued
		// are woken on the lock's channel, when the delete commits.
		leaveQueue: fmt.Sprintf(`WITH gone AS (
  DELETE FROM %[1]s WHERE ticket = $1 RETURNING name
)
SELECT pg_notify('lease_lock_' || $2::text::regclass::oid::bigint, name) FROM gone`, waiters),

		// $1 tickets.
		refreshTickets: fmt.Sprintf(`UPDATE %[1]s SET seen_at = clock_timestamp() WHERE ticket = ANY($1::bigint[])`, waiters),

		// Tickets are numbered in the order they are taken; a waiter reads
		// the live ones of its name with a lower number.
		createWaiters: []string{
			fmt.Sprintf(`CREATE TABLE %[1]s (
  ticket  bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name    text        NOT NULL,
  seen_at timestamptz NOT NULL
)`, waiters),
			fmt.Sprintf(`CREATE INDEX ON %[1]s (name, ticket)`, waiters),
		},

		// $1 the table, quoted.
		oid: `SELECT $1::text::regclass::oid::bigint`,

		// Every renewal rewrites its row. Half-empty pages let PostgreSQL
		// do that as a heap-only (HOT) update, pruning old versions without
		// touching the index: in BenchmarkRenew1000 the table stays 6 times
		// smaller and renewals run about a third faster than when full.
		create: fmt.Sprintf(`CREATE TABLE %[1]s (
  name         text        PRIMARY KEY,
  execution_id text        NOT NULL,
  token        bigint      NOT NULL CHECK (token > 0),
  expires_at   timestamptz NOT NULL
) WITH (fillfactor = 50)`, table),
		createSeq: fmt.Sprintf(`CREATE SEQUENCE %[2]s AS bigint MINVALUE 1 OWNED BY %[1]s.token`, table, seq),
	}
}

// notifyChannel is the SQL expression, over a freed row, of the channel its
// release is sent to: the table's OID, so that every spelling of one table
// (with or without its schema) shares a channel, and the name is a short
// plain identifier whatever the table is called. channelName is the same
// for a listener.
const notifyChannel = `'lease_lock_' || tbl::bigint`

func channelName(oid int64) string { return fmt.Sprintf("lease_lock_%d", oid) }

// sequenceName returns the name of the token sequence of table: the table's
// name and "_token_seq", cut to fit PostgreSQL's 63 bytes with a hash of the
// whole name so that two long table names sharing a prefix do not collide.
func sequenceName(table string) string { return suffixed(table, "_token_seq") }

// waitersName returns the name of the waiters' table of table, made as
// sequenceName makes the sequence's.
func waitersName(table string) string { return suffixed(table, "_waiters") }

// suffixed returns table's name with suffix appended, cut as sequenceName
// describes.
func suffixed(table, suffix string) string {
	if len(table)+len(suffix) <= maxIdentifierLen {
		return table + suffix
	}
	h := fnv.New32a()
	h.Write([]byte(table))
	tag := fmt.Sprintf("_%08x", h.Sum32())
	cut := maxIdentifierLen - len(suffix) - len(tag)
	for cut > 0 && !utf8.RuneStart(table[cut]) {
		cut-- // never split a character
	}
	return table[:cut] + tag + suffix
}
