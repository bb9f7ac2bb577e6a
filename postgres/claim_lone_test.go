package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/internal/sqlclaim"
)

// TestClaimStoreLoneCallerCancelled: a Claim, Settle or Extend that finds
// its store idle runs its statement from its caller's goroutine; when the
// caller's context ends while the statement waits (here for a table
// lock), the statement is cancelled: the call returns the context's own
// error at once, while the lock is still held, and changes nothing.
func TestClaimStoreLoneCallerCancelled(t *testing.T) {
	ops := map[string]func(ctx context.Context, s *ClaimStore, c claim.Claim) error{
		"claim": func(ctx context.Context, s *ClaimStore, _ claim.Claim) error {
			_, err := s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "late", Limit: 1, Lease: long})
			return err
		},
		"settle": func(ctx context.Context, s *ClaimStore, c claim.Claim) error {
			return s.Settle(ctx, complete(c))
		},
		"extend": func(ctx context.Context, s *ClaimStore, c claim.Claim) error {
			_, err := s.Extend(ctx, c.Ref, 2*long)
			return err
		},
	}
	for op, call := range ops {
		t.Run(op, func(t *testing.T) {
			app := "lease-claims-lone-" + op
			s := claimStoreOn(t, newPool(t, app), WithClaimTable(uniqueTable()))
			enqueue(t, s, item("q", "a"), item("q", "b"))
			c := claimN(t, s, "q", "w", 1)[0]
			before := lookup(t, s, c.Item)
			lonely := s.claims.CallerBatches() + s.settles.CallerBatches() + s.extends.CallerBatches()

			unlock, waiting := lockTable(t, s, app)
			callCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- call(callCtx, s, c) }()
			require.Eventually(t, waiting, time.Minute, time.Millisecond, "the statement waits for the lock")
			cancel()
			err := callError(t, done, "the call did not end with its context")
			assert.Equal(t, callCtx.Err(), err, "the context's own error, as for any call whose context ends")
			assert.NotErrorIs(t, err, lease.ErrClosed)
			require.Eventually(t, func() bool { return !waiting() }, time.Minute, time.Millisecond,
				"the statement was cancelled in the server")
			assert.Equal(t, lonely+1, s.claims.CallerBatches()+s.settles.CallerBatches()+s.extends.CallerBatches(),
				"the statement was sent from its caller's goroutine")

			unlock()
			assert.Equal(t, before, lookup(t, s, c.Item), "the cancelled call changed nothing")
			assert.Equal(t, claim.Counts{Visible: 1, Claimed: 1}, counts(t, s, "q"))
		})
	}
}

// TestClaimStoreCloseEndsLoneCall: Close cancels the statement of a call
// sent from its caller's goroutine (here a Claim waiting for a table lock)
// and waits for it, as for any batch: the call fails with an error
// matching lease.ErrClosed and nothing of it runs once Close returned.
func TestClaimStoreCloseEndsLoneCall(t *testing.T) {
	const app = "lease-claims-lone-close"
	s := claimStoreOn(t, newPool(t, app), WithClaimTable(uniqueTable()))
	enqueue(t, s, item("q", "a"))
	unlock, waiting := lockTable(t, s, app)
	done := make(chan error, 1)
	go func() {
		_, err := s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: long})
		done <- err
	}()
	require.Eventually(t, waiting, time.Minute, time.Millisecond, "the statement waits for the lock")
	require.EqualValues(t, 1, s.claims.CallerBatches(), "sent from its caller's goroutine")
	require.NoError(t, s.Close())
	err := callError(t, done, "the call went on after Close returned")
	require.ErrorIs(t, err, lease.ErrClosed)
	require.Eventually(t, func() bool { return !waiting() }, time.Minute, time.Millisecond,
		"the statement was cancelled in the server")
	unlock()
	var claimed int
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT count(*) FROM "+s.table+" WHERE state = $1", sqlclaim.RowClaimed).Scan(&claimed))
	assert.Zero(t, claimed, "the cancelled claim took nothing")
}

// lockTable locks s's table from a transaction of its own, until unlock
// or the end of the test, and returns with unlock a function that reports
// whether a statement of the connections named app waits for a lock.
func lockTable(t *testing.T, s *ClaimStore, app string) (unlock func(), waiting func() bool) {
	t.Helper()
	locker, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	unlock = func() { require.NoError(t, locker.Rollback(ctx)) }
	t.Cleanup(func() { _ = locker.Rollback(ctx) })
	_, err = locker.Exec(ctx, "LOCK TABLE "+s.table+" IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)
	return unlock, func() bool {
		var n int
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&n))
		return n > 0
	}
}

// callError returns the error a call sends on done, failing the test with
// msg if none comes within 30 seconds.
func callError(t *testing.T, done <-chan error, msg string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal(msg)
		return nil
	}
}
