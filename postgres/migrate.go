package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrateLockClass is the first key of the transaction-level advisory lock
// that serialises Migrate calls; the second is a hash of the table name.
const migrateLockClass = 0x6c656173 // "leas"

// Migrate creates the provider's table, the sequence its fencing tokens are
// drawn from (named after the table, with "_token_seq" appended, and dropped
// with it) and its schema, if one was set with [WithSchema], unless the table
// exists. It is idempotent and safe to call from
// many processes at once: callers queue on an advisory lock for the table
// and only the first creates it. When the table exists, Migrate changes
// nothing, so it needs no privilege beyond reading the catalog.
func (p *Provider) Migrate(ctx context.Context) error {
	if ctx == nil {
		return invalid("migrate", "ctx", "must not be nil")
	}
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", int32(migrateLockClass), p.table); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", p.table).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return nil
		}
		if p.schema != "" {
			// Checked first because CREATE SCHEMA IF NOT EXISTS demands the
			// CREATE privilege on the database even when the schema exists.
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", p.schema).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				if _, err := tx.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{p.schema}.Sanitize()); err != nil {
					return err
				}
			}
		}
		if _, err := tx.Exec(ctx, p.sql.create); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, p.sql.createSeq)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: migrate %s: %w", p.table, err)
	}
	return nil
}
