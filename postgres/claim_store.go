package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/internal/sqlclaim"
)

// ClaimStore is a [claim.Store] that keeps items and claims in a PostgreSQL
// table: a durable work queue shared by every process that can reach the
// database. It is safe for concurrent use by multiple goroutines and
// processes sharing the table; every decision is taken by the database, on
// its clock, in one statement.
//
// An item is one row. Claim is one UPDATE over the claimable rows of a
// queue (FOR UPDATE SKIP LOCKED, in claim order), where claimable means
// waiting and due, or claimed with an expired lease: a crashed worker's
// items are taken back by the next Claim, with no rescuer. Each claim
// increments the item's token, which is never reset, and Extend and Settle
// act only if the item is still claimed with that token and its lease has
// not expired. Claim (per queue), Settle and Extend calls from many
// goroutines are coalesced into one statement per round trip, and return
// once it committed.
//
// The table must exist: create it with [ClaimStore.Migrate].
type ClaimStore struct {
	pool            *pgxpool.Pool
	cfg             claimConfig
	table           string // quoted, possibly schema-qualified
	migrationsTable string // likewise
	schema          string // unquoted; "" when unqualified
	poll            time.Duration
	sql             claimStatements
	eng             *sqlclaim.Engine

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // the flushers and the listener

	claims  *sqlclaim.Batcher[claim.ClaimRequest, []claim.Claim]
	settles *sqlclaim.Batcher[claim.Settlement, settled]
	extends *sqlclaim.Batcher[extension, time.Time]
	notes   *claimNotifier

	closed atomic.Bool

	// beforeExisting, when set by a test, runs in Enqueue between the
	// insert and the read of the items already holding keys.
	beforeExisting func()
	// beforeListen, when set by a test, runs in each listening session
	// between connecting and LISTEN.
	beforeListen func()
}

// dialect is the store as the claim engine runs it: each step of a flow
// as PostgreSQL statements (see claim_dialect.go).
type dialect struct{ *ClaimStore }

var _ sqlclaim.Store = (*ClaimStore)(nil)

// NewClaimStore returns a ClaimStore that runs its statements on pool. It
// sends nothing to the database; call [ClaimStore.Migrate] once (from any
// number of processes) before using it. It returns an error matching
// lease.ErrInvalidArgument when pool is nil or an option is invalid.
//
// The store starts goroutines that send batches of Claim and Settle calls
// ([WithFlushers] of each) and of Extend calls (one), each using one
// connection of the pool while a batch is under way; and, on the first
// Notify or the first Claim with a Lost function, one that holds its own
// connection (outside the pool, made from the pool's configuration)
// listening for notifications. Close stops them.
func NewClaimStore(pool *pgxpool.Pool, opts ...ClaimOption) (*ClaimStore, error) {
	if pool == nil {
		return nil, invalid("claims.new", "pool", "must not be nil")
	}
	c, id, migrations, queues, err := claimTables(opts)
	if err != nil {
		return nil, err
	}
	switch {
	case c.poll <= 0:
		return nil, invalid("claims.new", "poll", fmt.Sprintf("must be positive, got %v", c.poll))
	case c.batch < 1:
		return nil, invalid("claims.new", "batch", fmt.Sprintf("must be at least 1, got %d", c.batch))
	case c.flushers < 1:
		return nil, invalid("claims.new", "flushers", fmt.Sprintf("must be at least 1, got %d", c.flushers))
	}
	if err := c.retention.Check(); err != nil {
		var le *lease.Error
		errors.As(err, &le)
		return nil, invalid("claims.new", le.Field, le.Detail)
	}
	s := &ClaimStore{
		pool:            pool,
		cfg:             c,
		migrationsTable: migrations.Sanitize(),
		table:           id.Sanitize(),
		schema:          c.schema,
		poll:            c.poll,
		sql:             newClaimStatements(id.Sanitize(), migrations.Sanitize(), queues.Sanitize(), c.retention),
	}
	d := dialect{s}
	// The database's clock may be ahead of this host's: the Lost registry
	// keeps a claim a minute past its expiry as this host tells it.
	s.eng = sqlclaim.New(d, sqlclaim.Config{Checks: checks, Closed: &s.closed, Now: time.Now, Margin: time.Minute})
	s.ctx, s.cancel = context.WithCancel(context.Background())
	// A lone call on an idle store is sent from its caller's goroutine;
	// its statement ends with its caller's context too (see
	// sqlclaim.CallerBound in runClaim, runSettle and runExtend).
	batches := func(flushers int) sqlclaim.BatcherConfig {
		return sqlclaim.BatcherConfig{Max: c.batch, Flushers: flushers, CallerRuns: true, Closed: claimClosed}
	}
	s.claims = sqlclaim.NewBatcher(batches(c.flushers), d.runClaim)
	s.settles = sqlclaim.NewBatcher(batches(c.flushers), d.runSettle)
	s.extends = sqlclaim.NewBatcher(batches(1), d.runExtend)
	s.notes = newClaimNotifier(s)
	s.claims.Start(s.ctx, &s.wg)
	s.settles.Start(s.ctx, &s.wg)
	s.extends.Start(s.ctx, &s.wg)
	return s, nil
}

// Table returns the store's table as it appears in its statements: quoted,
// and qualified with its schema when one was set.
func (s *ClaimStore) Table() string { return s.table }

// Notify returns a channel that is closed once an item of queue may have
// become claimable: when a notification for queue arrives on the store's
// listening connection (Enqueue, Settle with a retry or snooze due at
// once, RequeueDead, from any process), when an item this store delayed
// becomes due, when the listening connection (re)starts, after the poll
// interval ([WithPoll]) in any case, or when the store closes. The
// waiters of one queue share one channel. Call stop when no longer
// waiting.
func (s *ClaimStore) Notify(queue string) (ready <-chan struct{}, stop func()) {
	return s.notes.notify(queue)
}

// Close stops the store's goroutines and closes its listening connection;
// it does not close the pool. Calls waiting for a batch fail with an error
// matching lease.ErrClosed, as do later calls; Notify channels are closed.
// The statements of Claim, Settle and Extend batches under way, those
// sent from a caller's goroutine included, are cancelled and waited for:
// a call whose statement is cut off fails with an error matching
// lease.ErrClosed. No Lost function runs after Close returns. Close is
// idempotent.
func (s *ClaimStore) Close() error {
	s.eng.Close(func() {
		s.cancel()
		s.notes.close()
		s.wg.Wait()
	})
	return nil
}

// begin checks what every call needs: a context that is not nil or done,
// and an open store.
func (s *ClaimStore) begin(ctx context.Context, op string) error { return s.eng.Begin(ctx, op) }

func (s *ClaimStore) open(op string) error {
	if s.closed.Load() {
		return claimClosed(op)
	}
	return nil
}

// fail wraps a database error of op, or reports the store closed if it
// closed meanwhile.
func (s *ClaimStore) fail(op string, err error) error {
	var le *lease.Error
	if errors.As(err, &le) {
		return err
	}
	if s.closed.Load() {
		return claimClosed(op)
	}
	return fmt.Errorf("postgres: claims %s: %w", op, err)
}

func claimClosed(op string) error {
	return &lease.Error{Package: "postgres", Code: lease.CodeClosed, Op: "claims." + op, Detail: "store closed"}
}

// Tracking starts the listening connection, if it has not started: Cancel
// from another process reaches this one as a notification.
func (d dialect) Tracking() {
	d.notes.mu.Lock()
	if !d.notes.closed {
		d.notes.startLocked()
	}
	d.notes.mu.Unlock()
}

// Closed is the error of a call on a closed store.
func (d dialect) Closed(op string) error { return claimClosed(op) }

// Fail is fail: a PostgreSQL error of op wrapped.
func (d dialect) Fail(op string, err error) error { return d.fail(op, err) }
