package postgres

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/lease/claim"
)

// Migration is one version of a table's schema as SQL text, for those who
// apply migrations with a tool of their own (goose, golang-migrate, atlas)
// rather than with Migrate. It is a plain value, safe to copy and share.
type Migration struct {
	// Version counts from 1; apply a table's migrations in order.
	Version int
	// SQL is the migration's statements, each ended by a semicolon and a
	// newline. It may hold a DO block, one statement whose body has
	// semicolons of its own: a tool that splits files on semicolons must
	// be told where it begins and ends.
	SQL string
}

// LockMigrationSQL returns, as SQL, what [LockProvider.Migrate] creates for a
// LockProvider with opts, in two migrations: version 1 creates the schema
// (CREATE SCHEMA IF NOT EXISTS, when [WithLockSchema] is given), the table and
// its token sequence; version 2 the table of the waiters of
// [LockProvider.AcquireWait]. LockProvider.Migrate creates each of the two
// tables that is missing and leaves the others, so an application may still
// call it, after either version. The options are checked as
// [NewLockProvider] checks them.
func LockMigrationSQL(opts ...LockOption) ([]Migration, error) {
	c, id, seq, waiters, err := lockTables(opts)
	if err != nil {
		return nil, err
	}
	var v1, v2 strings.Builder
	if c.schemaSet {
		statement(&v1, createSchema(c.schema))
	}
	sql := newStatements(id.Sanitize(), seq.Sanitize(), waiters.Sanitize())
	statement(&v1, sql.create)
	statement(&v1, sql.createSeq)
	for _, stmt := range sql.createWaiters {
		statement(&v2, stmt)
	}
	return []Migration{{Version: 1, SQL: v1.String()}, {Version: 2, SQL: v2.String()}}, nil
}

// ClaimMigrationSQL returns, as SQL, the migrations [ClaimStore.Migrate]
// applies for a ClaimStore with opts, version 1 first. Each one also
// records itself in the table of applied migrations
// ([ClaimMigrationsTable]), which version 1 creates, as Migrate does: an
// application calling Migrate after them finds nothing left to apply, and
// one calling it between two of them applies the rest. Version 1 creates
// the schema, when [WithClaimSchema] is given. The options are checked as
// [NewClaimStore] checks those that name tables.
func ClaimMigrationSQL(opts ...ClaimOption) ([]Migration, error) {
	c, id, migrations, queues, err := claimTables(opts)
	if err != nil {
		return nil, err
	}
	table := id.Sanitize()
	sql := newClaimStatements(table, migrations.Sanitize(), queues.Sanitize(), claim.Retention{})
	versions := [][]string{sql.v1, {dropStateChecks(table)}, sql.v3, sql.v4, sql.v5, sql.v6}
	versions[1] = append(versions[1], sql.v2...)
	out := make([]Migration, len(versions))
	for i, stmts := range versions {
		var b strings.Builder
		if i == 0 {
			if c.schemaSet {
				statement(&b, createSchema(c.schema))
			}
			statement(&b, sql.migrations)
		}
		for _, s := range stmts {
			statement(&b, s)
		}
		statement(&b, strings.Replace(sql.markMigration, "($1, $2)",
			fmt.Sprintf("(%s, %d)", quoteLiteral(table), i+1), 1))
		out[i] = Migration{Version: i + 1, SQL: b.String()}
	}
	return out, nil
}

// dropStateChecks is version 2's first statement: a DO block that drops
// version 1's check of the state column, found by its definition because
// PostgreSQL chose its name, as ClaimStore.Migrate does in Go.
func dropStateChecks(table string) string {
	return doBlock(table, fmt.Sprintf(`DECLARE c text;
BEGIN
  FOR c IN SELECT conname::text FROM pg_constraint
    WHERE conrelid = %[1]s::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%%state%%'
  LOOP
    EXECUTE 'ALTER TABLE ' || %[1]s || ' DROP CONSTRAINT ' || quote_ident(c);
  END LOOP;
END`, quoteLiteral(table)))
}

// createSchema creates schema unless it exists.
func createSchema(schema string) string {
	return "CREATE SCHEMA IF NOT EXISTS " + pgx.Identifier{schema}.Sanitize()
}

// statement appends stmt to b, ended by a semicolon and a newline.
func statement(b *strings.Builder, stmt string) {
	b.WriteString(stmt)
	b.WriteString(";\n")
}

// quoteLiteral quotes s as an SQL string literal, for a server with
// standard_conforming_strings on (the default since PostgreSQL 9.1).
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// lockTables applies opts to the lock provider's defaults and checks the
// names they give; it returns the configuration and the names of the
// provider's table, token sequence and waiters table, in the schema when
// one is given.
func lockTables(opts []LockOption) (c config, id, seq, waiters pgx.Identifier, err error) {
	c = defaultConfig()
	for _, o := range opts {
		o.apply(&c)
	}
	if err := checkIdentifier("table", c.table); err != nil {
		return c, nil, nil, nil, err
	}
	id, seq, waiters = pgx.Identifier{c.table}, pgx.Identifier{sequenceName(c.table)}, pgx.Identifier{waitersName(c.table)}
	if c.schemaSet {
		if err := checkIdentifier("schema", c.schema); err != nil {
			return c, nil, nil, nil, err
		}
		in := pgx.Identifier{c.schema}
		id, seq, waiters = append(in, id...), append(in[:1:1], seq...), append(in[:1:1], waiters...)
	}
	return c, id, seq, waiters, nil
}

// claimTables applies opts to the claim store's defaults and checks the
// names they give; it returns the configuration and the names of the
// items' table, the table of applied migrations and the paused queues'
// table, in the schema when one is given.
func claimTables(opts []ClaimOption) (c claimConfig, id, migrations, queues pgx.Identifier, err error) {
	c = defaultClaimConfig()
	for _, o := range opts {
		o.applyClaim(&c)
	}
	if err := checkIdentifier("table", c.table); err != nil {
		return c, nil, nil, nil, err
	}
	id, migrations, queues = pgx.Identifier{c.table}, pgx.Identifier{ClaimMigrationsTable}, pgx.Identifier{ClaimQueuesTable}
	if c.schemaSet {
		if err := checkIdentifier("schema", c.schema); err != nil {
			return c, nil, nil, nil, err
		}
		in := pgx.Identifier{c.schema}
		id, migrations, queues = append(in, id...), append(in[:1:1], migrations...), append(in[:1:1], queues...)
	}
	return c, id, migrations, queues, nil
}
