package sqlite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/sqlite"
)

// A delayed item enqueued through another store of the file (another
// process, as far as this store can tell) wakes this store's waiter when
// its delay ends: the store reads the next due instant from the file after
// the other's commit, and sets a timer on its clock for it.
func TestDelayFromAnotherStoreWakes(t *testing.T) {
	path := tempFile(t)
	clkA, clkB := leasetest.NewFakeClock(epoch), leasetest.NewFakeClock(epoch)
	a := newClaimStore(t, path, sqlite.WithClock(clkA), sqlite.WithSynchronous(sqlite.SyncNormal))
	b := newClaimStore(t, path, sqlite.WithClock(clkB), sqlite.WithSynchronous(sqlite.SyncNormal),
		sqlite.WithPoll(time.Millisecond))

	ready, stop := b.Notify("q")
	_, err := a.Enqueue(t.Context(), []claim.NewItem{{Queue: "q", Delay: time.Minute, MaxAttempts: 1}})
	require.NoError(t, err)
	select {
	case <-ready: // the commit itself, seen by the poll
	case <-time.After(10 * time.Second):
		t.Fatal("the other store's commit did not wake the waiter")
	}
	stop()

	ready, stop = b.Notify("q")
	defer stop()
	require.Eventually(t, func() bool { return clkB.Pending() > 0 }, 10*time.Second, time.Millisecond,
		"a timer for the item's due instant")
	clkB.Advance(time.Minute - 1)
	select {
	case <-ready:
		t.Fatal("woken before the delay ended")
	default:
	}
	clkB.Advance(1)
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the end of the delay did not wake the waiter")
	}
	got, err := b.Claim(t.Context(), claim.ClaimRequest{Queue: "q", Owner: "b", Limit: 1, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, got, 1)
}
