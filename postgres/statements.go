package postgres

import (
	"fmt"
	"hash/fnv"
	"unicode/utf8"
)

// statements is the SQL a Provider runs, with its table and sequence names
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
	holder    string
	held      string
	remaining string
	oid       string
	create    string
	// createSeq makes the sequence tokens are drawn from. Owned by the
	// token column, it is dropped with the table.
	createSeq string
}

func newStatements(table, seq string) statements {
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

		// $1 name, $2 lock delay in µs. No row when the lock is released
		// or was never taken.
		remaining: fmt.Sprintf(`SELECT (extract(epoch FROM expires_at + $2::bigint * interval '1 microsecond' - clock_timestamp()) * 1000000)::bigint
FROM %[1]s WHERE name = $1 AND expires_at > '-infinity'`, table),

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
func sequenceName(table string) string {
	const suffix = "_token_seq"
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
