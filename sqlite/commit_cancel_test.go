package sqlite_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	msqlite "modernc.org/sqlite"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

// gate holds the inserts of the queues "hold" and "slow" in their
// statement, through a trigger that calls lease_test_gate for each of
// gateRows rows: the first call of an insert reports the queue on entered
// and waits for the queue's release channel, then fails the insert if
// fail says so; every call yields the processor, so that a context that
// ended reaches the statement before it finishes.
type gate struct {
	entered chan string
	release map[string]chan struct{}
	fail    map[string]bool
}

const gateRows = 2000

var (
	gateNow      atomic.Pointer[gate]
	registerGate = sync.OnceValue(func() error {
		return msqlite.RegisterScalarFunction("lease_test_gate", 2,
			func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
				g := gateNow.Load()
				if g == nil {
					return int64(1), nil
				}
				if args[1].(int64) == 0 {
					q := args[0].(string)
					g.entered <- q
					<-g.release[q]
					if g.fail[q] {
						return nil, errors.New("the gate failed the insert")
					}
				}
				runtime.Gosched()
				return int64(1), nil
			})
	})
)

// gatedStore is a claim store on a file whose inserts into the queues
// "hold" and "slow" pass through g.
func gatedStore(t *testing.T, g *gate) *sqlite.ClaimStore {
	t.Helper()
	return newClaimStore(t, gatedFile(t, g))
}

// gatedFile is a new file whose inserts into the queues "hold" and "slow"
// pass through g.
func gatedFile(t *testing.T, g *gate) string {
	t.Helper()
	require.NoError(t, registerGate())
	path := tempFile(t)
	s, err := sqlite.NewClaimStore(t.Context(), path)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.ExecContext(t.Context(), fmt.Sprintf(`CREATE TRIGGER lease_test_gate AFTER INSERT ON lease_claims
WHEN NEW.queue IN ('hold', 'slow') BEGIN
  SELECT lease_test_gate(NEW.queue, j.key)
  FROM json_each('[' || replace(hex(zeroblob(%d)), '00', '0,') || '0]') AS j;
END`, gateRows))
	require.NoError(t, err)
	require.NoError(t, db.Close())
	gateNow.Store(g)
	t.Cleanup(func() { gateNow.Store(nil) })
	return path
}

// A caller whose context ends while its write runs in a shared
// transaction gets its context's error, and touches nobody else: the
// other writes of the batch (before and after it, of one statement or
// several, a completion among them) all return nil and are in the file,
// and the caller's own write is in the file whole or not at all.
func TestGroupCommitCallerGivesUp(t *testing.T) {
	g := &gate{entered: make(chan string, 4),
		release: map[string]chan struct{}{"hold": make(chan struct{}), "slow": make(chan struct{})}}
	s := gatedStore(t, g)
	ctx := t.Context()
	_, err := s.Enqueue(ctx, []claim.NewItem{{Queue: "q", Key: "done", MaxAttempts: 3}})
	require.NoError(t, err)
	claims, err := s.Claim(ctx, claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: time.Hour})
	require.NoError(t, err)
	require.Len(t, claims, 1)

	// A first batch, held in its transaction, so that the writes below
	// queue up and share the next one.
	held := make(chan error, 1)
	go func() {
		_, err := s.Enqueue(ctx, []claim.NewItem{{Queue: "hold", MaxAttempts: 1}})
		held <- err
	}()
	require.Equal(t, "hold", <-g.entered)

	results := map[string]chan error{}
	queued := 0
	start := func(name string, ctx context.Context, f func(ctx context.Context) error) {
		ch := make(chan error, 1)
		results[name] = ch
		go func() { ch <- f(ctx) }()
		queued++
		require.Eventually(t, func() bool { return sqlite.PendingWrites(s) == queued },
			10*time.Second, time.Millisecond, "%s is not queued", name)
	}
	enqueue := func(items ...claim.NewItem) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := s.Enqueue(ctx, items)
			return err
		}
	}
	giveUp, cancel := context.WithCancel(ctx)
	defer cancel()
	start("before", ctx, enqueue(claim.NewItem{Queue: "q", Key: "before", MaxAttempts: 1}))
	start("gives up", giveUp, enqueue(claim.NewItem{Queue: "slow", Key: "a", MaxAttempts: 1},
		claim.NewItem{Queue: "slow", Key: "b", MaxAttempts: 1}))
	start("several", ctx, enqueue(claim.NewItem{Queue: "q", Key: "s1", MaxAttempts: 1},
		claim.NewItem{Queue: "q", Key: "s2", MaxAttempts: 1}))
	start("complete", ctx, func(ctx context.Context) error {
		return s.Settle(ctx, claim.Settlement{Ref: claims[0].Ref, How: claim.SettleComplete})
	})
	start("after", ctx, enqueue(claim.NewItem{Queue: "q", Key: "after", MaxAttempts: 1}))

	close(g.release["hold"])
	require.NoError(t, <-held)
	// The next batch holds every write above; the one that gives up is
	// inside its statement.
	require.Equal(t, "slow", <-g.entered)
	cancel()
	// It stops waiting at once, while the batch is still in its insert.
	select {
	case err := <-results["gives up"]:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Error("the caller that gave up still waits for the batch")
	}
	close(g.release["slow"])
	for _, name := range []string{"before", "several", "complete", "after"} {
		assert.NoError(t, <-results[name], name)
	}

	items, err := s.List(ctx, claim.Query{Queue: "q", Limit: 100})
	require.NoError(t, err)
	var keys []string
	for _, it := range items {
		keys = append(keys, it.Key)
	}
	assert.ElementsMatch(t, []string{"before", "s1", "s2", "after"}, keys, "the completed item is gone, the others are in")
	slow, err := s.Counts(ctx, "slow")
	require.NoError(t, err)
	assert.Contains(t, []int{0, 2}, slow.Visible, "the abandoned enqueue is whole or absent")
	hold, err := s.Counts(ctx, "hold")
	require.NoError(t, err)
	assert.Equal(t, 1, hold.Visible)
}
