package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The two keys of the transaction-level advisory lock that every Migrate of
// this package takes before it reads or creates anything. Neither depends on
// the table or the schema: names do not map one to one onto the catalog
// entries a migration creates. Two tables in one new schema both create that
// schema; "t" found through search_path and "s"."t" are one table and one
// row type; a table may even be named like another table's sequence. Keyed
// on names, such migrations ran side by side, and the later one failed with
// a unique violation on the catalog (pg_namespace_nspname_index,
// pg_type_typname_nsp_index) instead of finding what the other created. A
// single key serialises them all; Migrate runs once per process start and
// holds the lock for a few milliseconds, so the queue is never long.
const (
	migrateLockClass = 0x6c656173 // "leas"
	migrateLockKey   = 0x6d696772 // "migr"
)

// Migrate creates the provider's table, the sequence its fencing tokens are
// drawn from (named after the table, with "_token_seq" appended, and dropped
// with it) and its schema, if one was set with [WithLockSchema], unless the table
// exists; and the table of the waiters of [LockProvider.AcquireWait] (named
// after the table, with "_waiters" appended), unless it exists, so that a
// table made by an older version gains it. It is idempotent and safe to call from many processes at once, for
// the same or different tables and schemas: every Migrate of this package
// queues on one advisory lock of the database, and each checks what exists
// only once it holds the lock, so it finds what an earlier one created. When
// both tables exist, Migrate changes nothing, so it needs no privilege
// beyond reading the catalog.
func (p *LockProvider) Migrate(ctx context.Context) error {
	if ctx == nil {
		return invalid("migrate", "ctx", "must not be nil")
	}
	// Read committed whatever the server's default_transaction_isolation:
	// each statement then sees what was committed before it started, so the
	// checks below, which run after the lock is granted, see everything the
	// previous holder created. Under repeatable read the snapshot would date
	// from the lock request.
	opts := pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
	err := pgx.BeginTxFunc(ctx, p.pool, opts, func(tx pgx.Tx) error {
		if err := lockMigrations(ctx, tx); err != nil {
			return err
		}
		exists, err := relationExists(ctx, tx, p.table)
		if err != nil {
			return err
		}
		if !exists {
			if err := p.createTable(ctx, tx); err != nil {
				return err
			}
		}
		return p.migrateWaiters(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("postgres: migrate %s: %w", p.table, err)
	}
	return nil
}

// createTable creates the schema if it is missing, the table and its
// sequence.
func (p *LockProvider) createTable(ctx context.Context, tx pgx.Tx) error {
	if err := ensureSchema(ctx, tx, p.schema); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, p.sql.create); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, p.sql.createSeq)
	return err
}

// migrateWaiters creates the waiters' table unless it exists: tables made
// before AcquireWait queued its waiters lack it, and get it here.
func (p *LockProvider) migrateWaiters(ctx context.Context, tx pgx.Tx) error {
	exists, err := relationExists(ctx, tx, p.waiters)
	if err != nil || exists {
		return err
	}
	for _, stmt := range p.sql.createWaiters {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// relationExists reports whether the table (quoted) exists.
func relationExists(ctx context.Context, tx pgx.Tx, table string) (bool, error) {
	var exists bool
	err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists)
	return exists, err
}

// lockMigrations takes, for the rest of tx, the advisory lock that every
// Migrate of this package holds. It is released when tx ends, so a caller
// that dies or is cancelled cannot leave it held.
func lockMigrations(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, $2)", int32(migrateLockClass), int32(migrateLockKey))
	return err
}

// ensureSchema creates schema in tx unless it exists or is "" (no schema).
func ensureSchema(ctx context.Context, tx pgx.Tx, schema string) error {
	if schema == "" {
		return nil
	}
	// Checked first because CREATE SCHEMA IF NOT EXISTS demands the CREATE
	// privilege on the database even when the schema exists.
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	_, err := tx.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	return err
}
