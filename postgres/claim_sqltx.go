package postgres

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SQLTx adapts a database/sql transaction, opened on a *sql.DB of pgx's
// stdlib driver (github.com/jackc/pgx/v5/stdlib: sql.Open("pgx", ...),
// stdlib.OpenDB or stdlib.OpenDBFromPool), to a ClaimTx, so that
// [ClaimStore.EnqueueTx] and [ClaimStore.CompleteTx] run in it with the
// guarantees they give in a pgx.Tx: the store works in a savepoint of tx,
// its work commits or rolls back with tx, and waiters are woken at the
// commit. This serves code built on database/sql (sqlc, bun, gorm, ...):
//
//	tx, err := db.BeginTx(ctx, nil)
//	...
//	items, err := store.EnqueueTx(ctx, postgres.SQLTx(tx), newItems)
//
// The store runs its statements on tx's connection while database/sql
// holds it for one call of tx's, so a concurrent use of tx waits for the
// store's call, as database/sql makes it wait for any other. A nil tx, or
// one already committed or rolled back, gets the store's error matching
// lease.ErrInvalidArgument naming "tx"; so does a transaction of another
// driver, which cannot run pgx's statements, and nothing changes.
//
// The ClaimTx returned is a plain value, safe to copy, and safe for
// concurrent use as tx is. Its Begin, which the store does not call,
// starts a savepoint of tx and returns it as a pgx.Tx: its statements run
// on tx's connection outside database/sql's hold, so tx must not be used
// until it ends, and its LargeObjects is not supported.
func SQLTx(tx *sql.Tx) ClaimTx { return sqlTx{tx} }

// sqlTx is the ClaimTx of a database/sql transaction.
type sqlTx struct{ tx *sql.Tx }

// sqlSavepoint names the savepoints the store takes in a database/sql
// transaction.
const sqlSavepoint = "lease_claims"

// Begin starts a savepoint of the transaction and returns it.
func (t sqlTx) Begin(ctx context.Context) (pgx.Tx, error) {
	const op = "claims.begin"
	if t.tx == nil {
		return nil, invalid(op, "tx", "must not be nil")
	}
	var sp *savepoint
	err := t.onConn(ctx, func(conn *pgx.Conn) (string, error) {
		sp = &savepoint{conn: conn, name: sqlSavepoint}
		return "SAVEPOINT " + sqlSavepoint, nil
	})
	var foreign *foreignTxError
	if errors.As(err, &foreign) {
		return nil, invalid(op, "tx", foreign.Error())
	}
	if err != nil {
		return nil, err
	}
	return sp, nil
}

// run runs fn in a savepoint of the transaction, on its connection while
// database/sql holds it: it is released if fn returns nil and rolled back
// to otherwise.
func (t sqlTx) run(ctx context.Context, fn func(pgx.Tx) error) error {
	return t.onConn(ctx, func(conn *pgx.Conn) (string, error) {
		sp := &savepoint{conn: conn, name: sqlSavepoint}
		if _, err := conn.Exec(ctx, "SAVEPOINT "+sp.name); err != nil {
			return "", err
		}
		if err := fn(sp); err != nil {
			if rbErr := sp.Rollback(ctx); rbErr != nil {
				return "", rbErr
			}
			return "", err
		}
		// The release is the statement of tx's own call.
		sp.closed = true
		return "RELEASE SAVEPOINT " + sp.name, nil
	})
}

// onConn calls fn with the transaction's pgx connection while database/sql
// holds it for one ExecContext of tx's, and runs the statement fn returns
// as that call's. pgx's stdlib driver hands a pgx.QueryRewriter argument
// the connection; any other driver refuses it.
func (t sqlTx) onConn(ctx context.Context, fn func(*pgx.Conn) (string, error)) error {
	r := &connRewriter{fn: fn}
	// The text is replaced; a driver that prepares it before refusing r
	// prepares an empty statement, and one that pgx's stdlib driver
	// deallocates when it closes it (unlike "").
	_, err := t.tx.ExecContext(ctx, "-- lease claims", r)
	switch {
	case r.err != nil:
		return r.err
	case err == nil || r.ran || errors.Is(err, sql.ErrTxDone) || ctx.Err() != nil:
		return err
	}
	return &foreignTxError{err}
}

// foreignTxError reports a database/sql transaction whose driver did not
// hand pgx its connection: bad input naming "tx", which the store's call
// reports under its own name (see failTx).
type foreignTxError struct{ err error }

func (e *foreignTxError) Error() string {
	return "is not a transaction of pgx's stdlib driver (github.com/jackc/pgx/v5/stdlib): " + e.err.Error()
}

func (e *foreignTxError) Unwrap() error { return e.err }

// connRewriter is the pgx.QueryRewriter through which onConn reaches the
// connection: it is handed to one ExecContext and used by it alone.
type connRewriter struct {
	fn  func(*pgx.Conn) (string, error)
	ran bool
	err error
}

// RewriteQuery calls fn with conn and returns the statement fn returns.
func (r *connRewriter) RewriteQuery(_ context.Context, conn *pgx.Conn, _ string, _ []any) (string, []any, error) {
	r.ran = true
	query, err := r.fn(conn)
	if err != nil {
		r.err = err
		return "", nil, err
	}
	return query, nil, nil
}

// savepoint is a savepoint of the transaction under way on conn, as a
// pgx.Tx: Commit releases it and Rollback rolls back to it. It is not safe
// for concurrent use, as a pgx.Tx is not.
type savepoint struct {
	conn   *pgx.Conn
	name   string
	depth  int
	closed bool
}

func (sp *savepoint) Begin(ctx context.Context) (pgx.Tx, error) {
	if sp.closed {
		return nil, pgx.ErrTxClosed
	}
	nested := &savepoint{conn: sp.conn, name: sqlSavepoint + "_" + strconv.Itoa(sp.depth+1), depth: sp.depth + 1}
	if _, err := sp.conn.Exec(ctx, "SAVEPOINT "+nested.name); err != nil {
		return nil, err
	}
	return nested, nil
}

func (sp *savepoint) Commit(ctx context.Context) error {
	if sp.closed {
		return pgx.ErrTxClosed
	}
	sp.closed = true
	_, err := sp.conn.Exec(ctx, "RELEASE SAVEPOINT "+sp.name)
	return err
}

func (sp *savepoint) Rollback(ctx context.Context) error {
	if sp.closed {
		return pgx.ErrTxClosed
	}
	sp.closed = true
	_, err := sp.conn.Exec(ctx, "ROLLBACK TO SAVEPOINT "+sp.name+"; RELEASE SAVEPOINT "+sp.name)
	return err
}

func (sp *savepoint) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if sp.closed {
		return 0, pgx.ErrTxClosed
	}
	return sp.conn.CopyFrom(ctx, table, columns, src)
}

func (sp *savepoint) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return sp.conn.SendBatch(ctx, b)
}

// LargeObjects is not supported: pgx gives no way to make one on a
// savepoint of its callers'.
func (sp *savepoint) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (sp *savepoint) Prepare(ctx context.Context, name, query string) (*pgconn.StatementDescription, error) {
	if sp.closed {
		return nil, pgx.ErrTxClosed
	}
	return sp.conn.Prepare(ctx, name, query)
}

func (sp *savepoint) Exec(ctx context.Context, query string, args ...any) (pgconn.CommandTag, error) {
	if sp.closed {
		return pgconn.CommandTag{}, pgx.ErrTxClosed
	}
	return sp.conn.Exec(ctx, query, args...)
}

func (sp *savepoint) Query(ctx context.Context, query string, args ...any) (pgx.Rows, error) {
	if sp.closed {
		return nil, pgx.ErrTxClosed
	}
	return sp.conn.Query(ctx, query, args...)
}

func (sp *savepoint) QueryRow(ctx context.Context, query string, args ...any) pgx.Row {
	if sp.closed {
		return errRow{pgx.ErrTxClosed}
	}
	return sp.conn.QueryRow(ctx, query, args...)
}

func (sp *savepoint) Conn() *pgx.Conn { return sp.conn }

// errRow is the pgx.Row of a query that could not start.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
