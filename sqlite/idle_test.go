package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// An idle Work waits for an item: its empty claims commit nothing worth
// waking for, so it does not claim again and again (once it made thousands
// of empty write transactions a second, holding the file's write lock).
func TestIdleWorkDoesNotSpin(t *testing.T) {
	s := newClaimStore(t, tempFile(t))
	b := lease.Must(claim.New(s))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- b.Work(ctx, claim.Worker{Queue: "idle", Concurrency: 10,
			Handler: func(context.Context, claim.Claim) error { return nil }})
	}()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	// Work's first claim finds nothing; from then on it waits.
	require.Eventually(t, func() bool { return s.Transactions() >= 1 }, 5*time.Second, time.Millisecond)
	before := s.Transactions()
	assert.Never(t, func() bool { return s.Transactions()-before > 5 }, 300*time.Millisecond, 5*time.Millisecond,
		"an idle worker made %d write transactions", s.Transactions()-before)

	// It still takes the next item at once.
	_, err := b.Enqueue(context.Background(), "idle", []byte("job"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		c, err := b.Counts(context.Background(), "idle")
		return err == nil && c.Visible == 0 && c.Claimed == 0
	}, 5*time.Second, time.Millisecond)
}
