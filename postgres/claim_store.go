package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
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

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // the flushers and the listener

	claims  *claimBatcher[claim.ClaimRequest, []claim.Claim]
	settles *claimBatcher[claim.Settlement, struct{}]
	extends *claimBatcher[time.Duration, time.Time]
	notes   *claimNotifier

	closed atomic.Bool
	mu     sync.Mutex // guards lost and lostPrune; closed is set under it
	// lost holds the Lost functions of this store's live claims that
	// have one, with their expiry (this host's clock), so that Cancel can
	// call them. Entries leave when the claim is settled, found stale, or
	// cancelled; expired ones are pruned as the map grows past twice the
	// size it had after the last pruning.
	lost      map[claim.Ref]lostClaim
	lostPrune int
	callbacks sync.WaitGroup // Lost functions running

	// beforeExisting, when set by a test, runs in Enqueue between the
	// insert and the read of the items already holding keys.
	beforeExisting func()
	// beforeListen, when set by a test, runs in each listening session
	// between connecting and LISTEN.
	beforeListen func()
}

type lostClaim struct {
	fn      func(claim.Ref, error)
	expires time.Time
	// settling counts this store's Settle calls on the claim under way:
	// one of them may have removed the row, so the listener's catch-up
	// does not take its absence for a Cancel.
	settling int
}

var _ claim.Store = (*ClaimStore)(nil)

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
	c := defaultClaimConfig()
	for _, o := range opts {
		o.applyClaim(&c)
	}
	if err := checkIdentifier("table", c.table); err != nil {
		return nil, err
	}
	id, migrations := pgx.Identifier{c.table}, pgx.Identifier{ClaimMigrationsTable}
	queues := pgx.Identifier{ClaimQueuesTable}
	if c.schemaSet {
		if err := checkIdentifier("schema", c.schema); err != nil {
			return nil, err
		}
		id = append(pgx.Identifier{c.schema}, id...)
		migrations = append(pgx.Identifier{c.schema}, migrations...)
		queues = append(pgx.Identifier{c.schema}, queues...)
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
		lost:            map[claim.Ref]lostClaim{},
		lostPrune:       64,
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.claims = newClaimBatcher("claim", c.batch, c.flushers, s.runClaim)
	s.settles = newClaimBatcher("settle", c.batch, c.flushers, s.runSettle)
	s.extends = newClaimBatcher("extend", c.batch, 1, s.runExtend)
	s.notes = newClaimNotifier(s)
	s.claims.start(s.ctx, &s.wg)
	s.settles.start(s.ctx, &s.wg)
	s.extends.start(s.ctx, &s.wg)
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
// No Lost function runs after Close returns. Close is idempotent.
func (s *ClaimStore) Close() error {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return nil
	}
	s.closed.Store(true)
	s.mu.Unlock()
	s.cancel()
	s.notes.close()
	s.wg.Wait()
	s.callbacks.Wait()
	return nil
}

// begin checks what every call needs: a context that is not nil or done,
// and an open store.
func (s *ClaimStore) begin(ctx context.Context, op string) error {
	if ctx == nil {
		return invalid("claims."+op, "ctx", "must not be nil")
	}
	if err := s.open(op); err != nil {
		return err
	}
	return ctx.Err()
}

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

// track records the Lost function of claims.
func (s *ClaimStore) track(claims []claim.Claim, fn func(claim.Ref, error)) {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return
	}
	for _, c := range claims {
		s.lost[c.Ref] = lostClaim{fn: fn, expires: c.ExpiresAt}
	}
	if len(s.lost) >= 2*s.lostPrune {
		// The database's clock may be ahead of ours: keep a margin.
		cut := time.Now().Add(-time.Minute)
		for r, l := range s.lost {
			if l.expires.Before(cut) {
				delete(s.lost, r)
			}
		}
		s.lostPrune = max(64, len(s.lost))
	}
	s.mu.Unlock()
	// Cancel from another process reaches this one as a notification.
	s.notes.mu.Lock()
	if !s.notes.closed {
		s.notes.startLocked()
	}
	s.notes.mu.Unlock()
}

// untrack forgets the Lost function of r, if any.
func (s *ClaimStore) untrack(r claim.Ref) {
	s.mu.Lock()
	delete(s.lost, r)
	s.mu.Unlock()
}

// retrack updates the expiry of a tracked claim.
func (s *ClaimStore) retrack(r claim.Ref, expires time.Time) {
	s.mu.Lock()
	if l, ok := s.lost[r]; ok {
		l.expires = expires
		s.lost[r] = l
	}
	s.mu.Unlock()
}

// settling counts a Settle of the tracked claim r starting (1) or ending
// (-1); a claim that is not tracked is left alone.
func (s *ClaimStore) settling(r claim.Ref, d int) {
	s.mu.Lock()
	if l, ok := s.lost[r]; ok {
		l.settling += d
		s.lost[r] = l
	}
	s.mu.Unlock()
}

// lose calls, once, the Lost function of r, a claim ended by Cancel.
func (s *ClaimStore) lose(r claim.Ref, op string) {
	s.mu.Lock()
	l, ok := s.lost[r]
	if !ok || s.closed.Load() {
		s.mu.Unlock()
		return
	}
	delete(s.lost, r)
	s.callbacks.Add(1)
	s.mu.Unlock()
	defer s.callbacks.Done()
	// The cause matches claim.ErrCancelled and lease.ErrStaleUse, and is a
	// *lease.Error for errors.As.
	l.fn(r, fmt.Errorf("%w: %w", staleClaim(op, r), claim.ErrCancelled))
}

func staleClaim(op string, r claim.Ref) *lease.Error { return checks.StaleClaim("claims."+op, r) }

func claimClosed(op string) error {
	return &lease.Error{Package: "postgres", Code: lease.CodeClosed, Op: "claims." + op, Detail: "store closed"}
}

func clonePayload(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
