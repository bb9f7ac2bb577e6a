package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ClaimMigrationsTable is the table, in the claim table's schema, where
// [ClaimStore.Migrate] records the migrations it applied: one row per
// claim table and version.
const ClaimMigrationsTable = "lease_migrations"

// ClaimQueuesTable is the table, in the claim table's schema, that holds
// the paused queues of every claim table: one row per claim table and
// paused queue.
const ClaimQueuesTable = "lease_claim_queues"

// claimMigration is one version of the schema, applied inside Migrate's
// transaction.
type claimMigration func(ctx context.Context, tx pgx.Tx) error

// claimMigrations returns the store's migrations, version 1 first.
func (s *ClaimStore) claimMigrations() []claimMigration {
	return []claimMigration{statementsMigration(s.sql.v1), s.migrateV2, statementsMigration(s.sql.v3), statementsMigration(s.sql.v4),
		statementsMigration(s.sql.v5), statementsMigration(s.sql.v6)}
}

// statementsMigration is a migration made of statements run in order.
func statementsMigration(stmts []string) claimMigration {
	return func(ctx context.Context, tx pgx.Tx) error {
		for _, stmt := range stmts {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	}
}

// migrateV2 adds the item's kind, the finished states (completed and
// cancelled, kept for their retention period) and when an item finished.
// Version 1's check of the state column has a name PostgreSQL chose, so it
// is found by its definition and dropped before the wider check is added.
func (s *ClaimStore) migrateV2(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT conname::text FROM pg_constraint
WHERE conrelid = $1::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%state%'`, s.table)
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, err := tx.Exec(ctx, "ALTER TABLE "+s.table+" DROP CONSTRAINT "+pgx.Identifier{name}.Sanitize()); err != nil {
			return err
		}
	}
	return statementsMigration(s.sql.v2)(ctx, tx)
}

// Migrate brings the store's table up to the version this package needs:
// it creates the schema (if one was set with [WithClaimSchema]) and the
// table of applied migrations if they are missing, then applies, in order
// and in one transaction, each migration the table of applied migrations
// does not list for this claim table, recording it there. It is idempotent
// and safe to call from many processes at once: it takes the same
// database-wide advisory lock as [LockProvider.Migrate] before it reads
// anything, so each Migrate sees what the previous one applied. A claim
// table that was dropped is created again, whatever its recorded versions.
func (s *ClaimStore) Migrate(ctx context.Context) error {
	if ctx == nil {
		return invalid("claims.migrate", "ctx", "must not be nil")
	}
	if err := s.open("migrate"); err != nil {
		return err
	}
	// Read committed, as in LockProvider.Migrate: each statement sees what
	// the previous lock holder committed.
	opts := pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
	err := pgx.BeginTxFunc(ctx, s.pool, opts, func(tx pgx.Tx) error {
		if err := lockMigrations(ctx, tx); err != nil {
			return err
		}
		if err := ensureSchema(ctx, tx, s.schema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.sql.migrations); err != nil {
			return err
		}
		var done int
		if err := tx.QueryRow(ctx, s.sql.migrated, s.table).Scan(&done); err != nil {
			return err
		}
		if done > 0 {
			// A table dropped by hand leaves its versions behind: start
			// it over rather than trust them.
			var exists bool
			if err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", s.table).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				if _, err := tx.Exec(ctx, "DELETE FROM "+s.migrationsTable+" WHERE target = $1", s.table); err != nil {
					return err
				}
				done = 0
			}
		}
		for v, migrate := range s.claimMigrations() {
			version := v + 1
			if version <= done {
				continue
			}
			if err := migrate(ctx, tx); err != nil {
				return fmt.Errorf("version %d: %w", version, err)
			}
			if _, err := tx.Exec(ctx, s.sql.markMigration, s.table, version); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: claims migrate %s: %w", s.table, err)
	}
	return nil
}
