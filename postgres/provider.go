package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// LockProvider is a [lock.Provider] that keeps locks in a PostgreSQL table.
// It is safe for concurrent use, from any number of goroutines and processes
// sharing the table: all coordination happens in the database.
//
// The table must exist; create it with [LockProvider.Migrate].
type LockProvider struct {
	pool      *pgxpool.Pool
	lockDelay int64  // microseconds
	table     string // quoted, possibly schema-qualified
	seq       string // the token sequence, likewise
	waiters   string // the waiters' table, likewise
	schema    string // unquoted; "" when unqualified
	sql       statements
	hub       *waitHub // wakes this provider's waiters (wait_hub.go)
	// ticketTTL is how long a waiter's ticket lives unrefreshed: the
	// constant, but for tests.
	ticketTTL time.Duration
	// onWait, if set (by tests), is called each time AcquireWait starts
	// waiting, queued.
	onWait func(name string)
}

var (
	_ lock.Provider          = (*LockProvider)(nil)
	_ lockprovider.Waiter    = (*LockProvider)(nil)
	_ lockprovider.Inspector = (*LockProvider)(nil)
)

// NewLockProvider returns a LockProvider that runs its statements on pool.
// It sends nothing to the database; call [LockProvider.Migrate] once (from
// any number of processes) before the first Acquire. NewLockProvider
// returns an error matching lease.ErrInvalidArgument when pool is nil or an
// option is invalid.
func NewLockProvider(pool *pgxpool.Pool, opts ...LockOption) (*LockProvider, error) {
	if pool == nil {
		return nil, invalid("new", "pool", "must not be nil")
	}
	c, id, seq, waiters, err := lockTables(opts)
	if err != nil {
		return nil, err
	}
	if c.lockDelay < 0 {
		return nil, invalid("new", "lock delay", fmt.Sprintf("must not be negative, got %v", c.lockDelay))
	}
	table := id.Sanitize()
	p := &LockProvider{
		pool:      pool,
		lockDelay: micros(c.lockDelay),
		table:     table,
		seq:       seq.Sanitize(),
		waiters:   waiters.Sanitize(),
		schema:    c.schema,
		sql:       newStatements(table, seq.Sanitize(), waiters.Sanitize()),
		ticketTTL: ticketTTL,
	}
	p.hub = newWaitHub(p)
	return p, nil
}

// Acquire takes the lock name for executionID for d, measured on the
// database's clock, if it is unheld, released or expired (and past any
// lock delay). It returns nil, nil when someone holds it, the same
// executionID included. The new Lease's Token is greater than every token
// issued before for name. d is rounded up to whole microseconds, the
// database's resolution.
//
// On an error the outcome is unknown (the statement may have committed
// before the connection failed); a lock taken that way expires after d.
func (p *LockProvider) Acquire(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	if err := lockChecks.Acquire(ctx, name, executionID, d); err != nil {
		return nil, err
	}
	return p.acquireOn(ctx, p.pool, name, executionID, d)
}

// querier runs a statement: the pool, or one connection taken from it.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// acquireOn is Acquire, on q, for checked arguments.
func (p *LockProvider) acquireOn(ctx context.Context, q querier, name, executionID string, d time.Duration) (*lock.Lease, error) {
	var (
		token   int64
		expires time.Time
	)
	err := q.QueryRow(ctx, p.sql.acquire, name, executionID, micros(d), p.lockDelay, p.seq).Scan(&token, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil // held: the upsert's WHERE refused the take-over
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: acquire %q: %w", name, err)
	}
	return &lock.Lease{Name: name, ExecutionID: executionID, ExpiresAt: expires, Token: uint64(token)}, nil
}

// Renew extends, to d from now on the database's clock, every lease in
// leases that still holds its lock (same name, execution ID and token, not
// expired, not released), in one round trip. It returns those, in input
// order, with their new ExpiresAt and unchanged Token; the others are
// silently skipped. A lease listed twice is returned twice.
func (p *LockProvider) Renew(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
	if err := lockChecks.Renew(ctx, leases, d); err != nil {
		return nil, err
	}
	b := newBatch(leases)
	if b.empty() {
		return nil, nil
	}
	var rows pgx.Rows
	var err error
	if len(b.names) == 1 {
		rows, err = p.pool.Query(ctx, p.sql.renewOne, b.names[0], b.executionIDs[0], b.tokens[0], micros(d))
	} else {
		rows, err = p.pool.Query(ctx, p.sql.renew, b.names, b.executionIDs, b.tokens, micros(d))
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: renew batch of %d: %w", len(b.names), err)
	}
	// The statement returns the 1-based position in the batch of each
	// renewed lease.
	renewed := make([]time.Time, len(b.names))
	var (
		i       int64
		expires time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&i, &expires}, func() error {
		if i < 1 || i > int64(len(renewed)) {
			return fmt.Errorf("renewed lease %d of %d", i, len(renewed))
		}
		renewed[i-1] = expires
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: renew batch of %d: %w", len(b.names), err)
	}
	var out []lock.Lease
	for i, l := range leases {
		if j := b.at[i]; j >= 0 && !renewed[j].IsZero() {
			l.ExpiresAt = renewed[j]
			out = append(out, l)
		}
	}
	return out, nil
}

// Release frees, in one round trip, every lease in leases that still holds
// its lock (same name, execution ID and token, not expired). Releasing a
// lease that was already released, has expired, or was never issued is not
// an error, and a release never frees a lock someone else now holds. A
// released lock keeps its last token and can be acquired at once, lock
// delay or not. The statement that frees a lock also notifies its name to
// the waiters of [LockProvider.AcquireWait], delivered when it commits.
func (p *LockProvider) Release(ctx context.Context, leases []lock.Lease) error {
	if err := lockChecks.Release(ctx, leases); err != nil {
		return err
	}
	b := newBatch(leases)
	if b.empty() {
		return nil
	}
	var err error
	if len(b.names) == 1 {
		_, err = p.pool.Exec(ctx, p.sql.releaseOne, b.names[0], b.executionIDs[0], b.tokens[0])
	} else {
		_, err = p.pool.Exec(ctx, p.sql.release, b.names, b.executionIDs, b.tokens)
	}
	if err != nil {
		return fmt.Errorf("postgres: release batch of %d: %w", len(b.names), err)
	}
	return nil
}

// micros converts d to whole microseconds, rounding up so that a positive
// duration never becomes an empty lease.
func micros(d time.Duration) int64 {
	us := int64(d / time.Microsecond)
	if d%time.Microsecond > 0 {
		us++
	}
	return us
}
