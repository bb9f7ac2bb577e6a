package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// enqueueChunk is how many items one enqueue statement carries; a larger
// Enqueue sends several, in one transaction.
const enqueueChunk = 5000

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
// ([WithClaimFlushers] of each) and of Extend calls (one), each using one
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

// Enqueue adds items in one transaction and returns them, in order, with
// IDs in that order. An item whose Key exists in its queue (or earlier in
// items) is not added: the existing item is returned in its place. Items
// are sent in statements of a few thousand, each one INSERT ... SELECT
// FROM unnest(...) ON CONFLICT DO NOTHING, which also notifies the queues
// of the items visible at once when the transaction commits.
func (s *ClaimStore) Enqueue(ctx context.Context, items []claim.NewItem) ([]claim.Item, error) {
	return s.enqueueOn(ctx, s.pool, items)
}

// enqueueOn is Enqueue in a transaction begun on db: the pool, or the
// caller's transaction (then a savepoint of it).
func (s *ClaimStore) enqueueOn(ctx context.Context, db ClaimTx, items []claim.NewItem) ([]claim.Item, error) {
	const op = "enqueue"
	if err := s.begin(ctx, op); err != nil {
		return nil, err
	}
	for i, it := range items {
		if err := checkNewItem(i, it); err != nil {
			return nil, err
		}
	}
	out := make([]claim.Item, len(items))
	if len(items) == 0 {
		return out, nil
	}
	// A keyed item found on insert may be completed or deleted before the
	// next statement reads it. Its key is free then, so the enqueue starts
	// over, and the insert takes the key: it cannot vanish twice unless
	// another item takes and frees it meanwhile, hence the bound.
	var err error
	for range enqueueRetries {
		err = s.enqueueTx(ctx, db, items, out)
		if !errors.Is(err, errKeyVanished) {
			break
		}
	}
	if err != nil {
		return nil, s.failTx(op, err)
	}
	for _, it := range out {
		if it.State == claim.Delayed {
			s.notes.dueAt(it.Queue, time.Now().Add(it.VisibleAt.Sub(it.EnqueuedAt)))
		}
	}
	return out, nil
}

// enqueueRetries bounds the starts of one Enqueue.
const enqueueRetries = 8

// errKeyVanished reports a keyed item that held its key when the insert
// ran and was gone when it was read.
var errKeyVanished = errors.New("an item holding the key was removed during the enqueue")

// enqueueTx stores items in one transaction and fills out.
func (s *ClaimStore) enqueueTx(ctx context.Context, db ClaimTx, items []claim.NewItem, out []claim.Item) error {
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		var missing []int
		for start := 0; start < len(items); start += enqueueChunk {
			chunk := items[start:min(start+enqueueChunk, len(items))]
			m, err := s.enqueueChunk(ctx, tx, chunk, out[start:start+len(chunk)])
			if err != nil {
				return err
			}
			for _, i := range m {
				missing = append(missing, start+i)
			}
		}
		if len(missing) > 0 {
			if s.beforeExisting != nil {
				s.beforeExisting()
			}
			return s.existing(ctx, tx, items, missing, out)
		}
		return nil
	})
}

// enqueueChunk inserts items, fills out for those inserted and returns the
// positions of the others.
func (s *ClaimStore) enqueueChunk(ctx context.Context, tx pgx.Tx, items []claim.NewItem, out []claim.Item) ([]int, error) {
	n := len(items)
	queues, keys, kinds := make([]string, n), make([]*string, n), make([]string, n)
	tags, metadata := make([]string, n), make([][]byte, n)
	payloads := make([][]byte, n)
	delays, timeouts := make([]int64, n), make([]int64, n)
	maxes, prios := make([]int32, n), make([]int32, n)
	for i, it := range items {
		queues[i], kinds[i], tags[i], metadata[i] = it.Queue, it.Kind, tagsJSON(it.Tags), it.Metadata
		if it.Key != "" {
			keys[i] = &items[i].Key
		}
		payloads[i] = it.Payload
		delays[i], timeouts[i] = micros(it.Delay), micros(it.Timeout)
		maxes[i], prios[i] = int32(it.MaxAttempts), int32(it.Priority)
	}
	rows, err := tx.Query(ctx, s.sql.enqueue, queues, keys, payloads, delays, maxes, prios, timeouts, s.table, kinds, tags, metadata)
	if err != nil {
		return nil, err
	}
	var (
		missing []int
		pos     int64
		id      *int64
		due     *time.Time
		now     time.Time
		woke    int64
	)
	_, err = pgx.ForEachRow(rows, []any{&pos, &id, &due, &now, &woke}, func() error {
		i := int(pos) - 1
		if i < 0 || i >= n {
			return fmt.Errorf("enqueued item %d of %d", pos, n)
		}
		if id == nil {
			missing = append(missing, i)
			return nil
		}
		it := items[i]
		out[i] = claim.Item{
			ID: claim.ItemID(*id), Queue: it.Queue, Kind: it.Kind, Tags: slices.Clone(it.Tags),
			Metadata: clonePayload(it.Metadata), Key: it.Key, Payload: clonePayload(it.Payload),
			State: claim.Visible, MaxAttempts: it.MaxAttempts, Priority: it.Priority,
			Timeout: it.Timeout, EnqueuedAt: now, VisibleAt: *due,
		}
		if due.After(now) {
			out[i].State = claim.Delayed
		}
		return nil
	})
	return missing, err
}

// existing fills out[i], for each i in missing, with the item that holds
// items[i]'s key.
func (s *ClaimStore) existing(ctx context.Context, tx pgx.Tx, items []claim.NewItem, missing []int, out []claim.Item) error {
	queues, keys := make([]string, len(missing)), make([]string, len(missing))
	for j, i := range missing {
		queues[j], keys[j] = items[i].Queue, items[i].Key
	}
	rows, err := tx.Query(ctx, s.sql.existing, queues, keys)
	if err != nil {
		return err
	}
	type qk struct{ queue, key string }
	found := map[qk]claim.Item{}
	var r itemRow
	_, err = pgx.ForEachRow(rows, r.dest(), func() error {
		it, err := r.item()
		found[qk{it.Queue, it.Key}] = it
		return err
	})
	if err != nil {
		return err
	}
	for _, i := range missing {
		it, ok := found[qk{items[i].Queue, items[i].Key}]
		if !ok {
			// Its holder was completed between the insert and this read.
			return fmt.Errorf("key %q of queue %q: %w", items[i].Key, items[i].Queue, errKeyVanished)
		}
		it.Payload, it.Metadata = clonePayload(it.Payload), clonePayload(it.Metadata)
		it.Duplicate = true
		it.History, it.Tags = slices.Clone(it.History), slices.Clone(it.Tags)
		out[i] = it
	}
	return nil
}

// Claim claims up to req.Limit claimable items of req.Queue for req.Owner,
// each for req.Lease on the database's clock, and returns them in claim
// order (an empty slice when none is claimable). Claim calls on one queue
// from many goroutines share one statement per round trip, which deals the
// items out in call order. A call whose ctx ends while its statement is
// under way returns ctx's error; claims it may have made run out with
// their lease. An expired
// claim on its item's last attempt that the statement meets is moved to
// the dead letters instead, so a Claim may return fewer items than it
// could have. If req.Lost is set, Cancel of one of these items, from any
// process, calls it.
func (s *ClaimStore) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	const op = "claim"
	if err := s.begin(ctx, op); err != nil {
		return nil, err
	}
	if err := checkClaimRequest(req); err != nil {
		return nil, err
	}
	weight := min(req.Limit, math.MaxInt32)
	out, err := s.claims.call(ctx, &batchCall[claim.ClaimRequest, []claim.Claim]{group: req.Queue, weight: weight, req: req})
	if err != nil {
		return nil, err
	}
	if req.Lost != nil && len(out) > 0 {
		s.track(out, req.Lost)
	}
	return out, nil
}

// runClaim sends one batch of Claim calls on one queue.
func (s *ClaimStore) runClaim(ctx context.Context, calls []*batchCall[claim.ClaimRequest, []claim.Claim]) error {
	n := len(calls)
	owners, leases, starts := make([]string, n), make([]int64, n), make([]int64, n)
	var total int64
	for i, c := range calls {
		owners[i], leases[i], starts[i] = c.req.Owner, micros(c.req.Lease), total+1
		total += int64(c.weight)
		c.res = []claim.Claim{}
	}
	queue := calls[0].req.Queue
	rows, err := s.pool.Query(ctx, s.sql.claim, queue, owners, leases, starts, total, s.table)
	if err != nil {
		return s.fail("claim", err)
	}
	type picked struct {
		call, rn int64
		c        claim.Claim
	}
	var (
		got               []picked
		call, rn          int64
		id, token, tout   int64
		state, prio       int16
		attempt, maxAtt   int32
		enqueued, expires time.Time
		payload, metadata []byte
		kind, tags        string
	)
	_, err = pgx.ForEachRow(rows, []any{&call, &rn, &id, &state, &attempt, &maxAtt, &prio, &tout, &enqueued, &expires, &token, &payload, &kind, &tags, &metadata}, func() error {
		if call < 1 || call > int64(n) {
			return fmt.Errorf("claim for call %d of %d", call, n)
		}
		if state != rowClaimed {
			return nil // its lost claim was its last attempt: now dead
		}
		tagList, err := parseTags(tags)
		if err != nil {
			return fmt.Errorf("item %d: %w", id, err)
		}
		got = append(got, picked{call, rn, claim.Claim{
			Queue: queue, Kind: kind, Tags: tagList, Metadata: metadata, Item: claim.ItemID(id), Owner: owners[call-1], Payload: payload,
			Attempt: int(attempt), MaxAttempts: int(maxAtt), Priority: int(prio),
			Timeout: time.Duration(tout) * time.Microsecond, EnqueuedAt: enqueued, ExpiresAt: expires,
			Ref: claim.Ref{Item: claim.ItemID(id), Token: uint64(token)},
		}})
		payload, metadata = nil, nil // the next row gets its own
		return nil
	})
	if err != nil {
		return s.fail("claim", err)
	}
	slices.SortFunc(got, func(a, b picked) int { return cmp.Compare(a.rn, b.rn) })
	for _, p := range got {
		c := calls[p.call-1]
		c.res = append(c.res, p.c)
	}
	return nil
}

// Extend extends the live claim r to lease from now on the database's
// clock and returns its new expiry. Calls from many goroutines share one
// statement per round trip. A claim that is no longer live (settled,
// expired, claimed again, cancelled) gets an error matching
// lease.ErrStaleUse and nothing changes.
func (s *ClaimStore) Extend(ctx context.Context, r claim.Ref, leaseDuration time.Duration) (time.Time, error) {
	const op = "extend"
	if err := s.begin(ctx, op); err != nil {
		return time.Time{}, err
	}
	if err := checkRef(op, r); err != nil {
		return time.Time{}, err
	}
	if leaseDuration <= 0 {
		return time.Time{}, invalid("claims."+op, "lease_duration", leaseDuration.String()+" is not positive")
	}
	return s.extends.do(ctx, r, leaseDuration)
}

// Settle ends the live claim st.Ref as st.How says, and returns once the
// statement carrying it committed: nil means the outcome is stored. Calls
// from many goroutines share one statement per round trip. A claim that
// is no longer live gets an error matching lease.ErrStaleUse and nothing
// changes.
func (s *ClaimStore) Settle(ctx context.Context, st claim.Settlement) error {
	const op = "settle"
	if err := s.begin(ctx, op); err != nil {
		return err
	}
	if err := checkSettlement(st); err != nil {
		return err
	}
	s.settling(st.Ref, 1)
	_, err := s.settles.do(ctx, st.Ref, st)
	s.settling(st.Ref, -1)
	return err
}

// runSettle sends one batch of settlements.
func (s *ClaimStore) runSettle(ctx context.Context, calls []*batchCall[claim.Settlement, struct{}]) error {
	n := len(calls)
	ids, tokens, afters := make([]int64, n), make([]int64, n), make([]int64, n)
	hows, reasons := make([]int32, n), make([]string, n)
	for i, c := range calls {
		ids[i], tokens[i] = int64(c.req.Ref.Item), int64(c.req.Ref.Token)
		hows[i], afters[i], reasons[i] = int32(c.req.How), micros(c.req.After), c.req.Reason
	}
	rows, err := s.pool.Query(ctx, s.sql.settle, ids, tokens, hows, afters, reasons)
	if err != nil {
		return s.fail("settle", err)
	}
	settled := make([]bool, n)
	queues := make([]*string, n)
	var (
		pos   int64
		queue *string
	)
	_, err = pgx.ForEachRow(rows, []any{&pos, &queue}, func() error {
		if pos < 1 || pos > int64(n) {
			return fmt.Errorf("settled claim %d of %d", pos, n)
		}
		settled[pos-1], queues[pos-1] = true, queue
		return nil
	})
	if err != nil {
		return s.fail("settle", err)
	}
	now := time.Now()
	for i, c := range calls {
		s.untrack(c.req.Ref)
		if !settled[i] {
			c.err = staleClaim("settle", c.req.Ref)
			continue
		}
		if queues[i] != nil && c.req.After > 0 {
			s.notes.dueAt(*queues[i], now.Add(c.req.After))
		}
	}
	return nil
}

// runExtend sends one batch of extensions.
func (s *ClaimStore) runExtend(ctx context.Context, calls []*batchCall[time.Duration, time.Time]) error {
	n := len(calls)
	ids, tokens, leases := make([]int64, n), make([]int64, n), make([]int64, n)
	for i, c := range calls {
		ids[i], tokens[i], leases[i] = int64(c.item), int64(c.token), micros(c.req)
	}
	rows, err := s.pool.Query(ctx, s.sql.extend, ids, tokens, leases)
	if err != nil {
		return s.fail("extend", err)
	}
	var (
		pos     int64
		expires time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&pos, &expires}, func() error {
		if pos < 1 || pos > int64(n) {
			return fmt.Errorf("extended claim %d of %d", pos, n)
		}
		calls[pos-1].res = expires
		return nil
	})
	if err != nil {
		return s.fail("extend", err)
	}
	for _, c := range calls {
		r := claim.Ref{Item: c.item, Token: c.token}
		if c.res.IsZero() {
			s.untrack(r)
			c.err = staleClaim("extend", r)
			continue
		}
		s.retrack(r, c.res)
	}
	return nil
}

// Cancel deletes the item id of queue whatever its state. If it was
// claimed, its claim ends: later calls on it are stale, and the claim's
// Lost function is called with a cause matching claim.ErrCancelled and
// lease.ErrStaleUse, by this store if it made the claim, or by the store
// that made it (in any process) when the notification Cancel sends reaches
// its listening connection; if that connection was not listening then (not
// started yet, or reconnecting), once it listens again, when the store
// checks the claims it tracks against the table. An item that is not in
// queue gets an error matching claim.ErrNotFound.
func (s *ClaimStore) Cancel(ctx context.Context, queue string, id claim.ItemID) error {
	const op = "cancel"
	if err := s.begin(ctx, op); err != nil {
		return err
	}
	if err := checkItem(op, queue, id); err != nil {
		return err
	}
	var (
		gone, token int64
		live        bool
		note        *bool
	)
	err := s.pool.QueryRow(ctx, s.sql.cancel, queue, int64(id)).Scan(&gone, &token, &live, &note)
	if errors.Is(err, pgx.ErrNoRows) {
		return &claim.NotFoundError{Op: op, Queue: queue, Item: id}
	}
	if err != nil {
		return s.fail(op, err)
	}
	if live {
		s.lose(claim.Ref{Item: id, Token: uint64(token)}, op)
	}
	return nil
}

// Lookup returns the item id as of now on the database's clock.
func (s *ClaimStore) Lookup(ctx context.Context, id claim.ItemID) (claim.Item, error) {
	const op = "lookup"
	if err := s.begin(ctx, op); err != nil {
		return claim.Item{}, err
	}
	if id == 0 || id > math.MaxInt64 {
		return claim.Item{}, invalid("claims."+op, "id", "is not an item ID")
	}
	return s.oneItem(ctx, op, "", id, s.sql.lookup, int64(id))
}

// oneItem runs a statement returning one item's row and returns the item,
// or a *claim.NotFoundError for op, queue and id if there is none.
func (s *ClaimStore) oneItem(ctx context.Context, op, queue string, id claim.ItemID, sql string, args ...any) (claim.Item, error) {
	var r itemRow
	err := s.pool.QueryRow(ctx, sql, args...).Scan(r.dest()...)
	if errors.Is(err, pgx.ErrNoRows) {
		return claim.Item{}, &claim.NotFoundError{Op: op, Queue: queue, Item: id}
	}
	if err != nil {
		return claim.Item{}, s.fail(op, err)
	}
	it, err := r.item()
	if err != nil {
		return claim.Item{}, s.fail(op, err)
	}
	return it, nil
}

// List returns the items of q.Queue in q.State (every state when zero)
// with IDs above q.After, in ID order, at most q.Limit of them, as of now
// on the database's clock.
func (s *ClaimStore) List(ctx context.Context, q claim.Query) ([]claim.Item, error) {
	const op = "list"
	if err := s.begin(ctx, op); err != nil {
		return nil, err
	}
	switch {
	case q.Queue == "":
		return nil, invalid("claims."+op, "queue", "must not be empty")
	case q.State > claim.Cancelled:
		return nil, invalid("claims."+op, "state", q.State.String()+" is not a state")
	case q.Limit < 1:
		return nil, invalid("claims."+op, "limit", strconv.Itoa(q.Limit)+" is less than 1")
	}
	if err := checkName("claims."+op, "queue", q.Queue); err != nil {
		return nil, err
	}
	after := int64(min(uint64(q.After), math.MaxInt64))
	if err := checkText("claims."+op, "kind", q.Kind); err != nil {
		return nil, err
	}
	if err := checkText("claims."+op, "tag", q.Tag); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.sql.list, q.Queue, int32(q.State), after, q.Limit, q.Kind, q.Tag)
	if err != nil {
		return nil, s.fail(op, err)
	}
	out := []claim.Item{}
	var r itemRow
	_, err = pgx.ForEachRow(rows, r.dest(), func() error {
		it, err := r.item()
		out = append(out, it)
		return err
	})
	if err != nil {
		return nil, s.fail(op, err)
	}
	return out, nil
}

// Counts returns the numbers of items of queue in each state as of now on
// the database's clock. An unknown queue has zero counts.
func (s *ClaimStore) Counts(ctx context.Context, queue string) (claim.Counts, error) {
	const op = "counts"
	if err := s.begin(ctx, op); err != nil {
		return claim.Counts{}, err
	}
	if err := checkName("claims."+op, "queue", queue); err != nil {
		return claim.Counts{}, err
	}
	var v, d, c, x, done, gone int64
	if err := s.pool.QueryRow(ctx, s.sql.counts, queue).Scan(&v, &d, &c, &x, &done, &gone); err != nil {
		return claim.Counts{}, s.fail(op, err)
	}
	return claim.Counts{Visible: int(v), Delayed: int(d), Claimed: int(c), Dead: int(x),
		Completed: int(done), Cancelled: int(gone)}, nil
}

// RequeueDead makes the dead item id of queue visible at once with no
// attempts used, keeping its history, and wakes the queue's waiters. An
// item that is not a dead letter of queue gets an error matching
// claim.ErrNotFound.
func (s *ClaimStore) RequeueDead(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	const op = "requeue_dead"
	if err := s.begin(ctx, op); err != nil {
		return claim.Item{}, err
	}
	if err := checkItem(op, queue, id); err != nil {
		return claim.Item{}, err
	}
	return s.oneItem(ctx, op, queue, id, s.sql.requeueDead, queue, int64(id))
}

// DeleteDead deletes the dead item id of queue, freeing its key. An item
// that is not a dead letter of queue gets an error matching
// claim.ErrNotFound.
func (s *ClaimStore) DeleteDead(ctx context.Context, queue string, id claim.ItemID) error {
	const op = "delete_dead"
	if err := s.begin(ctx, op); err != nil {
		return err
	}
	if err := checkItem(op, queue, id); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, s.sql.deleteDead, queue, int64(id))
	if err != nil {
		return s.fail(op, err)
	}
	if tag.RowsAffected() == 0 {
		return &claim.NotFoundError{Op: op, Queue: queue, Item: id}
	}
	return nil
}

// Notify returns a channel that is closed once an item of queue may have
// become claimable: when a notification for queue arrives on the store's
// listening connection (Enqueue, Settle with a retry or snooze due at
// once, RequeueDead, from any process), when an item this store delayed
// becomes due, when the listening connection (re)starts, after the poll
// interval ([WithClaimPoll]) in any case, or when the store closes. The
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

func staleClaim(op string, r claim.Ref) *lease.Error {
	return &lease.Error{Code: lease.CodeStaleUse, Op: "claims." + op, LeaseID: lease.ID(r.Token),
		Detail: "item " + strconv.FormatUint(uint64(r.Item), 10) + " is no longer claimed by this claim"}
}

func claimClosed(op string) error {
	return &lease.Error{Code: lease.CodeClosed, Op: "claims." + op, Detail: "store closed"}
}

func clonePayload(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// itemRow is a row as claimColumns lists it.
type itemRow struct {
	id, timeout           int64
	queue, kind, tags     string
	key, owner            *string
	payload, history      []byte
	metadata              []byte
	state, priority       int16
	attempts, maxAttempts int32
	enqueued, due, now    time.Time
	deadAt, finishedAt    *time.Time
}

func (r *itemRow) dest() []any {
	return []any{&r.id, &r.queue, &r.kind, &r.key, &r.payload, &r.state, &r.attempts, &r.maxAttempts, &r.priority,
		&r.timeout, &r.enqueued, &r.due, &r.owner, &r.deadAt, &r.finishedAt, &r.history, &r.tags, &r.metadata, &r.now}
}

// failureJSON is a history entry as the statements write it.
type failureJSON struct {
	Attempt int     `json:"a"`
	Owner   *string `json:"o"`
	At      int64   `json:"t"` // µs since the Unix epoch
	Reason  string  `json:"r"`
	Lost    bool    `json:"l"`
}

// item is the row as a claim.Item as of r.now: a claim whose lease expired
// shows as visible again or dead, with its loss in the history, as the
// next Claim will write it.
func (r *itemRow) item() (claim.Item, error) {
	it := claim.Item{
		ID: claim.ItemID(r.id), Queue: r.queue, Kind: r.kind, Payload: r.payload,
		Attempts: int(r.attempts), MaxAttempts: int(r.maxAttempts), Priority: int(r.priority),
		Timeout: time.Duration(r.timeout) * time.Microsecond, EnqueuedAt: r.enqueued,
	}
	it.Metadata = r.metadata
	r.payload, r.metadata = nil, nil // the next row gets its own
	tags, err := parseTags(r.tags)
	if err != nil {
		return it, fmt.Errorf("item %d: %w", r.id, err)
	}
	it.Tags = tags
	if r.key != nil {
		it.Key = *r.key
	}
	var hist []failureJSON
	if err := json.Unmarshal(r.history, &hist); err != nil {
		return it, fmt.Errorf("item %d: history: %w", r.id, err)
	}
	for _, f := range hist {
		it.History = append(it.History, f.failure())
	}
	switch {
	case r.state == rowCompleted || r.state == rowCancelled:
		it.State = claim.Completed
		if r.state == rowCancelled {
			it.State = claim.Cancelled
		}
		if r.finishedAt != nil {
			it.FinishedAt = *r.finishedAt
		}
	case r.state == rowDead:
		it.State = claim.Dead
		if r.deadAt != nil {
			it.DeadAt = *r.deadAt
		}
	case r.state == rowClaimed && r.due.After(r.now):
		it.State = claim.Claimed
	case r.state == rowClaimed:
		owner := ""
		if r.owner != nil {
			owner = *r.owner
		}
		it.History = append(it.History, claim.Failure{Attempt: int(r.attempts), Owner: owner, At: r.due,
			Reason: "lease expired", Lost: true})
		if r.attempts >= r.maxAttempts {
			it.State, it.DeadAt = claim.Dead, r.due
		} else {
			it.State, it.VisibleAt = claim.Visible, r.due
		}
	case r.due.After(r.now):
		it.State, it.VisibleAt = claim.Delayed, r.due
	default:
		it.State, it.VisibleAt = claim.Visible, r.due
	}
	return it, nil
}

func (f failureJSON) failure() claim.Failure {
	x := claim.Failure{Attempt: f.Attempt, At: time.UnixMicro(f.At), Reason: f.Reason, Lost: f.Lost}
	if f.Owner != nil {
		x.Owner = *f.Owner
	}
	return x
}

// checkNewItem checks items[i], naming a field with the item, as in
// "items[2].queue", as the Broker does.
func checkNewItem(i int, it claim.NewItem) error {
	const op = "claims.enqueue"
	at := fmt.Sprintf("items[%d].", i)
	bad := func(field, detail string) error { return invalid(op, at+field, detail) }
	if err := checkName(op, at+"queue", it.Queue); err != nil {
		return err
	}
	if it.Key != "" {
		if err := checkName(op, at+"key", it.Key); err != nil {
			return err
		}
	}
	if err := checkTags(at, it.Tags); err != nil {
		return err
	}
	if len(it.Kind) > MaxNameLen {
		return bad("kind", fmt.Sprintf("is %d bytes, more than %d", len(it.Kind), MaxNameLen))
	}
	if err := checkText(op, "kind", it.Kind); err != nil {
		return bad("kind", err.(*lease.Error).Detail)
	}
	switch {
	case it.Delay < 0:
		return bad("delay", it.Delay.String()+" is negative")
	case it.MaxAttempts < 1 || it.MaxAttempts > math.MaxInt32:
		return bad("max_attempts", strconv.Itoa(it.MaxAttempts)+" is not between 1 and 2147483647")
	case it.Priority < 0 || it.Priority > claim.MaxPriority:
		return bad("priority", fmt.Sprintf("%d is not between 0 and %d", it.Priority, claim.MaxPriority))
	case it.Timeout < 0:
		return bad("timeout", it.Timeout.String()+" is negative")
	case it.Timeout > claim.MaxTimeout:
		// Beyond it the timeout in whole microseconds would not convert back.
		return bad("timeout", it.Timeout.String()+" is more than claim.MaxTimeout, "+claim.MaxTimeout.String())
	}
	return nil
}

func checkClaimRequest(req claim.ClaimRequest) error {
	const op = "claims.claim"
	if err := checkName(op, "queue", req.Queue); err != nil {
		return err
	}
	if err := checkName(op, "owner", req.Owner); err != nil {
		return err
	}
	switch {
	case req.Limit < 1:
		return invalid(op, "limit", strconv.Itoa(req.Limit)+" is less than 1")
	case req.Lease <= 0:
		return invalid(op, "lease_duration", req.Lease.String()+" is not positive")
	}
	return nil
}

func checkRef(op string, r claim.Ref) error {
	switch {
	case r.Item == 0 || r.Item > math.MaxInt64:
		return invalid("claims."+op, "ref", "does not name an item")
	case r.Token == 0 || r.Token > math.MaxInt64:
		return invalid("claims."+op, "ref", "has no claim token")
	}
	return nil
}

func checkSettlement(st claim.Settlement) error {
	const op = "settle"
	if err := checkRef(op, st.Ref); err != nil {
		return err
	}
	switch {
	case st.How < claim.SettleComplete || st.How > claim.SettleSnooze:
		return invalid("claims."+op, "how", st.How.String()+" is not a way to settle")
	case st.After < 0:
		return invalid("claims."+op, "after", st.After.String()+" is negative")
	}
	return checkText("claims."+op, "reason", st.Reason)
}

func checkItem(op, queue string, id claim.ItemID) error {
	if err := checkName("claims."+op, "queue", queue); err != nil {
		return err
	}
	if id == 0 || id > math.MaxInt64 {
		return invalid("claims."+op, "id", "is not an item ID")
	}
	return nil
}
