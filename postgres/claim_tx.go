package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// ClaimTx is what [ClaimStore.EnqueueTx] and [ClaimStore.CompleteTx] run
// in: a pgx.Tx of the caller's, usually, or a database/sql transaction
// adapted by [SQLTx]. The store works inside a savepoint of it (pgx.Tx's
// Begin), so that its own failure leaves the caller's transaction usable,
// and its work commits or rolls back with the caller's. Anything else
// with this Begin (a *pgx.Conn, a *pgxpool.Pool) runs the call in a
// transaction of its own.
type ClaimTx interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// EnqueueTx is Enqueue inside the caller's transaction tx: the items
// exist, and the queues' waiters are notified, only when tx commits (a
// NOTIFY is delivered at commit); if tx rolls back, nothing was enqueued,
// though the IDs drawn are spent. Keys are checked against what tx sees;
// of two read-committed transactions enqueueing one key, the second waits
// for the first and returns the first's item once it commits. The items
// get the defaults the Broker gives them (see claim.NewItem.WithDefaults):
// a MaxAttempts of 0 becomes claim.DefaultMaxAttempts, so that the item of
// claim.ArgsItem enqueues as it does through Broker.EnqueueMany; items is
// not changed. A nil tx (a typed nil *pgx.Conn, *pgxpool.Pool or pgx.Tx
// included) or a closed one gets an error matching
// lease.ErrInvalidArgument naming "tx", and nothing changes.
func (s *ClaimStore) EnqueueTx(ctx context.Context, tx ClaimTx, items []claim.NewItem) ([]claim.Item, error) {
	if nilTx(tx) {
		return nil, invalid("claims.enqueue", "tx", "must not be nil")
	}
	filled := make([]claim.NewItem, len(items))
	for i, n := range items {
		filled[i] = n.WithDefaults(0)
	}
	return s.enqueueOn(ctx, tx, filled)
}

// CompleteTx completes the live claim r inside the caller's transaction
// tx, so that a handler's own writes and its item's completion commit
// together: if tx rolls back, the claim is as it was (live until its lease
// expires). The claim must be live when CompleteTx runs, on the
// database's clock at that statement (not tx's start); from then on tx
// holds the item's row, so no other claim of it can be made before tx
// ends, and an Extend or Settle of r waits for tx. A claim that is not
// live gets an error matching lease.ErrStaleUse, and tx is left usable. A
// nil tx (a typed nil included) or a closed one gets an error matching
// lease.ErrInvalidArgument naming "tx". Once tx commits, Settle of r is
// stale: a Work handler that completes its claim this way should return
// nil and let the Broker's Complete find it already settled.
func (s *ClaimStore) CompleteTx(ctx context.Context, tx ClaimTx, r claim.Ref) error {
	const op = "complete_tx"
	if err := s.begin(ctx, op); err != nil {
		return err
	}
	if nilTx(tx) {
		return invalid("claims."+op, "tx", "must not be nil")
	}
	if err := checks.Ref("claims."+op, r); err != nil {
		return err
	}
	settled := false
	err := inTx(ctx, tx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, s.sql.settleTx, []int64{int64(r.Item)}, []int64{int64(r.Token)},
			[]int32{int32(claim.SettleComplete)}, []int64{0}, []string{""})
		if err != nil {
			return err
		}
		var (
			pos   int64
			queue *string
		)
		_, err = pgx.ForEachRow(rows, []any{&pos, &queue}, func() error {
			settled = pos == 1
			return nil
		})
		return err
	})
	if err != nil {
		return s.failTx(op, err)
	}
	if !settled {
		return s.eng.Stale(op, r)
	}
	return nil
}

// nilTx reports whether tx is nil or holds a nil: a nil pointer (a
// *pgx.Conn, *pgxpool.Pool or a pgx.Tx implementation), or SQLTx(nil).
// Calling Begin on one would dereference it.
func nilTx(tx ClaimTx) bool {
	if tx == nil {
		return true
	}
	if t, ok := tx.(sqlTx); ok {
		return t.tx == nil
	}
	switch v := reflect.ValueOf(tx); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// inTx runs fn in a transaction begun on db (pgx.BeginFunc): a savepoint
// of the caller's transaction, or a transaction of the pool's. A
// database/sql transaction runs fn while database/sql holds its
// connection.
func inTx(ctx context.Context, db ClaimTx, fn func(pgx.Tx) error) error {
	if t, ok := db.(sqlTx); ok {
		return t.run(ctx, fn)
	}
	return pgx.BeginFunc(ctx, db, fn)
}

// failTx is fail for a call in the caller's transaction: a transaction
// already committed or rolled back, or of a driver that cannot run the
// store's statements, is bad input.
func (s *ClaimStore) failTx(op string, err error) error {
	if errors.Is(err, pgx.ErrTxClosed) || errors.Is(err, sql.ErrTxDone) {
		return invalid("claims."+op, "tx", fmt.Sprintf("is closed: %v", err))
	}
	if foreign := (*foreignTxError)(nil); errors.As(err, &foreign) {
		return invalid("claims."+op, "tx", foreign.Error())
	}
	var le *lease.Error
	if errors.As(err, &le) {
		return err
	}
	return s.fail(op, err)
}
