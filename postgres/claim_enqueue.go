package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
	"github.com/leasehold/lease/internal/sqlclaim"
)

// enqueueChunk is how many items one enqueue statement carries; a larger
// Enqueue sends several, in one transaction.
const enqueueChunk = 5000

// Enqueue adds items in one transaction and returns them, in order, with
// IDs in that order. An item whose Key exists in its queue (or earlier in
// items) is not added: the existing item is returned in its place, unless
// the item's KeyStates leave out the existing item's state, which then
// gives its key up (see claim.Store). Items
// are sent in statements of a few thousand, each one INSERT ... SELECT
// FROM unnest(...) ON CONFLICT DO NOTHING, which also notifies the queues
// of the items visible at once when the transaction commits.
func (s *ClaimStore) Enqueue(ctx context.Context, items []claim.NewItem) ([]claim.Item, error) {
	return s.eng.Enqueue(ctx, items)
}

// Enqueue stores items in a transaction of the pool's.
func (d dialect) Enqueue(ctx context.Context, items []claim.NewItem, out []claim.Item) error {
	return d.enqueueIn(ctx, d.pool, items, out)
}

// enqueueOn is Enqueue in a transaction begun on db: the pool, or the
// caller's transaction (then a savepoint of it).
func (s *ClaimStore) enqueueOn(ctx context.Context, db ClaimTx, items []claim.NewItem) ([]claim.Item, error) {
	return s.eng.EnqueueWith(ctx, items, func(ctx context.Context, items []claim.NewItem, out []claim.Item) error {
		return s.enqueueIn(ctx, db, items, out)
	})
}

// enqueueIn stores items, checked, in a transaction begun on db and fills
// out.
func (s *ClaimStore) enqueueIn(ctx context.Context, db ClaimTx, items []claim.NewItem, out []claim.Item) error {
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
		return s.failTx("enqueue", err)
	}
	for _, it := range out {
		if it.State == claim.Delayed {
			s.notes.dueAt(it.Queue, time.Now().Add(it.VisibleAt.Sub(it.EnqueuedAt)))
		}
	}
	return nil
}

// enqueueRetries bounds the starts of one Enqueue.
const enqueueRetries = 8

// errKeyVanished reports a keyed item that held its key when the insert
// ran and was gone when it was read.
var errKeyVanished = errors.New("an item holding the key was removed during the enqueue")

// enqueueTx stores items in one transaction and fills out. On the pool,
// items without keys that fit in one statement go in that statement alone,
// its own transaction: one round trip to the server rather than three
// (BEGIN, the statement, COMMIT), which took most of a lone enqueue's
// time. A keyed item may need a second statement, which must read what
// the first left (see existing), so keyed items go in a transaction.
func (s *ClaimStore) enqueueTx(ctx context.Context, db ClaimTx, items []claim.NewItem, out []claim.Item) error {
	if pool, ok := db.(*pgxpool.Pool); ok && len(items) <= enqueueChunk && !slices.ContainsFunc(items, keyed) {
		missing, err := s.enqueueChunk(ctx, pool, items, out, map[queueKey]struct{}{})
		if err == nil && len(missing) > 0 {
			err = fmt.Errorf("%d items without a key were not inserted", len(missing))
		}
		return err
	}
	return inTx(ctx, db, func(tx pgx.Tx) error {
		var missing []int
		judged := map[queueKey]struct{}{}
		for start := 0; start < len(items); start += enqueueChunk {
			chunk := items[start:min(start+enqueueChunk, len(items))]
			m, err := s.enqueueChunk(ctx, tx, chunk, out[start:start+len(chunk)], judged)
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

// keyed reports whether it has a key.
func keyed(it claim.NewItem) bool { return it.Key != "" }

// rowsQuerier runs a statement: a transaction, or the pool.
type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// queueKey is a key of a queue.
type queueKey struct{ queue, key string }

// enqueueChunk inserts items, fills out for those inserted and returns the
// positions of the others. judged holds the keys an earlier chunk of the
// call judged, which are held whatever the later items' KeyStates, and
// gains this chunk's.
func (s *ClaimStore) enqueueChunk(ctx context.Context, tx rowsQuerier, items []claim.NewItem, out []claim.Item, judged map[queueKey]struct{}) ([]int, error) {
	n := len(items)
	queues, keys, kinds := make([]string, n), make([]*string, n), make([]string, n)
	tags, metadata := make([]string, n), make([][]byte, n)
	payloads := make([][]byte, n)
	delays, timeouts := make([]int64, n), make([]int64, n)
	maxes, prios, states := make([]int32, n), make([]int32, n), make([]int32, n)
	var mine []queueKey
	for i, it := range items {
		queues[i], kinds[i], tags[i], metadata[i] = it.Queue, it.Kind, claimstore.TagsJSON(it.Tags), it.Metadata
		if it.Key != "" {
			keys[i] = &items[i].Key
			k := queueKey{it.Queue, it.Key}
			if _, ok := judged[k]; !ok {
				states[i] = keyStateBits(it.KeyStates)
				mine = append(mine, k)
			}
		}
		payloads[i] = it.Payload
		delays[i], timeouts[i] = micros(it.Delay), micros(it.Timeout)
		maxes[i], prios[i] = int32(it.MaxAttempts), int32(it.Priority)
	}
	for _, k := range mine {
		judged[k] = struct{}{}
	}
	rows, err := tx.Query(ctx, s.sql.enqueue, queues, keys, payloads, delays, maxes, prios, timeouts, s.table, kinds, tags, metadata, states)
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
			Metadata: sqlclaim.ClonePayload(it.Metadata), Key: it.Key, Payload: sqlclaim.ClonePayload(it.Payload),
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

// keyStateBits is states as the enqueue statement takes them: bit 1 <<
// state for each, 0 for none (every state blocks).
func keyStateBits(states []claim.State) int32 {
	var bits int32
	for _, st := range states {
		bits |= 1 << st
	}
	return bits
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
		it.Payload, it.Metadata = sqlclaim.ClonePayload(it.Payload), sqlclaim.ClonePayload(it.Metadata)
		it.Duplicate = true
		it.History, it.Tags = slices.Clone(it.History), slices.Clone(it.Tags)
		out[i] = it
	}
	return nil
}
