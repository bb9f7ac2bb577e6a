package postgres

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// A claim's row changed by another transaction (here its expiry moved,
// as a heartbeat does) that commits while Settle or Extend waits for the
// row's lock is still settled or extended, not reported gone. The update
// finds the row again by primary key for this: the version committed
// while the lock was awaited is not visible to the statement's snapshot,
// so an update aimed at the address (ctid) of the version locked misses
// it, as this test shows of such a statement.
func TestSettleAndExtendAfterTheRowChangedWhileLocked(t *testing.T) {
	var extended time.Time
	cases := map[string]struct {
		opts []ClaimOption
		call func(s *ClaimStore, c claim.Claim) error
		want claim.State
	}{
		"complete kept": {
			opts: []ClaimOption{WithRetention(claim.StandardRetention)},
			call: func(s *ClaimStore, c claim.Claim) error { return s.Settle(ctx, complete(c)) },
			want: claim.Completed,
		},
		"complete deleted": {
			call: func(s *ClaimStore, c claim.Claim) error { return s.Settle(ctx, complete(c)) },
		},
		"retry": {
			call: func(s *ClaimStore, c claim.Claim) error {
				return s.Settle(ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleRetry, Reason: "again"})
			},
			want: claim.Visible,
		},
		"extend": {
			call: func(s *ClaimStore, c claim.Claim) error {
				var err error
				extended, err = s.Extend(ctx, c.Ref, time.Hour)
				return err
			},
			want: claim.Claimed,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := newTestClaimStore(t, tc.opts...)
			enqueue(t, s, item("q", "x"))
			c := claimN(t, s, "q", "w", 1)[0]

			tx, err := s.pool.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(ctx) }()
			_, err = tx.Exec(ctx, "UPDATE "+s.table+" SET due = due + interval '1 second' WHERE id = $1", int64(c.Item))
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() { done <- tc.call(s, c) }()
			waitForLockWait(t, s)
			require.NoError(t, tx.Commit(ctx))
			require.NoError(t, <-done)

			if tc.want == 0 {
				_, err := s.Lookup(ctx, c.Item)
				require.ErrorIs(t, err, claim.ErrNotFound, "the completed item is deleted")
				return
			}
			it := lookup(t, s, c.Item)
			assert.Equal(t, tc.want, it.State)
			if tc.want == claim.Claimed {
				assert.Greater(t, time.Until(extended), 50*time.Minute, "the extension applied")
			}
		})
	}
}
