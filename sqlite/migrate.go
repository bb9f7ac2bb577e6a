package sqlite

import (
	"context"
	"fmt"
)

// migrations are the schema's versions, version 1 first. A version is
// applied once per file, in one transaction with the record of it in
// lease_schema; a file whose recorded version is above the last one known
// here was written by a newer release and is refused.
var migrations = [][]string{
	{
		// The locks: one row per name ever taken. A released lock keeps its
		// row, and its token as the floor of the next holder's;
		// expires_at is then the smallest integer, before any instant.
		`CREATE TABLE lease_locks (
  name         TEXT    NOT NULL PRIMARY KEY,
  execution_id TEXT    NOT NULL,
  token        INTEGER NOT NULL CHECK (token > 0),
  expires_at   INTEGER NOT NULL
) WITHOUT ROWID`,
		// The items of the claim store. AUTOINCREMENT: an ID is never used
		// twice, even after the item with the highest one is deleted. due is
		// when a waiting item becomes claimable, or when a claim's lease
		// ends; token counts the item's claims and is never reset. Times
		// are nanoseconds since the Unix epoch; history is a JSON array.
		`CREATE TABLE lease_claims (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  queue        TEXT    NOT NULL,
  key          TEXT,
  payload      BLOB,
  state        INTEGER NOT NULL CHECK (state IN (1, 3, 4)),
  attempts     INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL CHECK (max_attempts > 0),
  priority     INTEGER NOT NULL,
  timeout_ns   INTEGER NOT NULL DEFAULT 0,
  enqueued_at  INTEGER NOT NULL,
  due          INTEGER NOT NULL,
  token        INTEGER NOT NULL DEFAULT 0,
  owner        TEXT,
  dead_at      INTEGER,
  history      TEXT    NOT NULL DEFAULT '[]'
)`,
		// The claim order, over the rows a Claim may take.
		`CREATE INDEX lease_claims_ready ON lease_claims (queue, priority, due, id) WHERE state IN (1, 3)`,
		// The next instant something becomes due, for idle waiters.
		`CREATE INDEX lease_claims_due ON lease_claims (due) WHERE state IN (1, 3)`,
		`CREATE UNIQUE INDEX lease_claims_key ON lease_claims (queue, key) WHERE key IS NOT NULL`,
		`CREATE INDEX lease_claims_dead ON lease_claims (queue, id) WHERE state = 4`,
	},
	{
		// An item's kind, tags (a JSON array of strings) and metadata (the
		// caller's bytes); the finished states, 5 completed and 6
		// cancelled, kept for their retention; finished_at, when such an
		// item finished, the start of its retention. SQLite cannot widen
		// a CHECK in place, so the table is made again and the rows
		// copied, their IDs with them. The AUTOINCREMENT counter is
		// carried over too: it may be above every ID left, and an ID must
		// never be used twice.
		`CREATE TABLE lease_claims_v2 (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  queue        TEXT    NOT NULL,
  kind         TEXT    NOT NULL DEFAULT '',
  key          TEXT,
  payload      BLOB,
  state        INTEGER NOT NULL CHECK (state IN (1, 3, 4, 5, 6)),
  attempts     INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL CHECK (max_attempts > 0),
  priority     INTEGER NOT NULL,
  timeout_ns   INTEGER NOT NULL DEFAULT 0,
  enqueued_at  INTEGER NOT NULL,
  due          INTEGER NOT NULL,
  token        INTEGER NOT NULL DEFAULT 0,
  owner        TEXT,
  dead_at      INTEGER,
  finished_at  INTEGER,
  history      TEXT    NOT NULL DEFAULT '[]',
  tags         TEXT    NOT NULL DEFAULT '[]',
  metadata     BLOB
)`,
		`INSERT INTO lease_claims_v2 (id, queue, key, payload, state, attempts, max_attempts, priority, timeout_ns,
  enqueued_at, due, token, owner, dead_at, history)
SELECT id, queue, key, payload, state, attempts, max_attempts, priority, timeout_ns,
  enqueued_at, due, token, owner, dead_at, history FROM lease_claims`,
		`DELETE FROM sqlite_sequence WHERE name = 'lease_claims_v2'`,
		`INSERT INTO sqlite_sequence (name, seq) SELECT 'lease_claims_v2', seq FROM sqlite_sequence WHERE name = 'lease_claims'`,
		`DROP TABLE lease_claims`,
		`ALTER TABLE lease_claims_v2 RENAME TO lease_claims`,
		`CREATE INDEX lease_claims_ready ON lease_claims (queue, priority, due, id) WHERE state IN (1, 3)`,
		`CREATE INDEX lease_claims_due ON lease_claims (due) WHERE state IN (1, 3)`,
		`CREATE UNIQUE INDEX lease_claims_key ON lease_claims (queue, key) WHERE key IS NOT NULL`,
		`CREATE INDEX lease_claims_dead ON lease_claims (queue, id) WHERE state = 4`,
		// The cleaner's order, over the rows it may delete: the finished
		// ones by state and finishing time, the dead letters by death.
		`CREATE INDEX lease_claims_finished ON lease_claims (state, finished_at) WHERE state IN (5, 6)`,
		`CREATE INDEX lease_claims_dead_at ON lease_claims (dead_at) WHERE state = 4`,
		// The paused queues: a row per queue paused, shared by every
		// process that opens the file.
		`CREATE TABLE lease_claim_queues (
  queue     TEXT    NOT NULL PRIMARY KEY,
  paused_at INTEGER NOT NULL
) WITHOUT ROWID`,
	},
	{
		// The rows no claim takes (dead, completed and cancelled) by queue
		// and state, in place of version 1's dead rows by queue and ID,
		// which no statement reads: an index entry also carries the row's
		// ID, so a state's rows stay in ID order. With a retention the
		// file holds a day of finished rows beside a few live ones, and
		// without this index Counts and Queues found the rows of a queue
		// by reading the whole table. With it they count the kept states
		// from the index alone, a range per queue and state, and Queues
		// steps from one queue's name to the next. Building it reads the
		// table once.
		`CREATE INDEX lease_claims_kept ON lease_claims (queue, state) WHERE state IN (4, 5, 6)`,
		`DROP INDEX lease_claims_dead`,
	},
}

// SchemaVersion is the version of the file's schema this package writes.
const SchemaVersion = 3

// migrate brings the file's schema up to SchemaVersion. It runs in one
// write transaction begun with BEGIN IMMEDIATE, which holds the file's
// write lock from the start, so processes opening a new file at once queue
// there, and each finds what the one before applied.
func migrate(ctx context.Context, d *db) error {
	return retryBusy(ctx, d.cfg.busy, func() error {
		tx, err := d.write.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS lease_schema (
  version    INTEGER NOT NULL PRIMARY KEY,
  applied_at INTEGER NOT NULL
)`); err != nil {
			return err
		}
		var done int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM lease_schema`).Scan(&done); err != nil {
			return err
		}
		if done > len(migrations) {
			return fmt.Errorf("the file's schema is version %d, newer than this package's %d", done, len(migrations))
		}
		for v := done; v < len(migrations); v++ {
			for _, stmt := range migrations[v] {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("schema version %d: %w", v+1, err)
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO lease_schema (version, applied_at) VALUES (?, ?)`, v+1, d.now()); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
}
