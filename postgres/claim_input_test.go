package postgres

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

func TestNewClaimStoreBadInput(t *testing.T) {
	pool := newPool(t, "lease-claims-test")
	_, err := NewClaimStore(nil)
	requireInvalid(t, err, "pool")
	for _, tc := range []struct {
		field string
		opt   ClaimOption
	}{
		{"table", WithClaimTable("")},
		{"table", WithClaimTable(strings.Repeat("t", 64))},
		{"table", WithClaimTable("bad\x00name")},
		{"table", WithClaimTable("\xff")},
		{"schema", WithClaimSchema("")},
		{"poll", WithPoll(0)},
		{"batch", WithBatch(0)},
		{"flushers", WithFlushers(0)},
	} {
		_, err := NewClaimStore(pool, tc.opt)
		requireInvalid(t, err, tc.field)
	}
	s, err := NewClaimStore(pool)
	require.NoError(t, err)
	assert.Equal(t, `"lease_claims"`, s.Table())
	require.NoError(t, s.Close())
}

// TestClaimStoreBadInput sends each kind of bad input to each operation: the
// error names the field, and nothing changes.
func TestClaimStoreBadInput(t *testing.T) {
	s := newTestClaimStore(t)
	its := enqueue(t, s, item("q", "x"), claim.NewItem{Queue: "q", Key: "k", Payload: []byte("y"), MaxAttempts: 2})
	c := claimN(t, s, "q", "w", 1)[0]
	before, err := s.List(ctx, claim.Query{Queue: "q", Limit: 10})
	require.NoError(t, err)

	var nilCtx context.Context
	good := claim.NewItem{Queue: "q", Payload: []byte("z"), MaxAttempts: 1}
	badItems := []struct {
		field string
		edit  func(*claim.NewItem)
	}{
		{"queue", func(it *claim.NewItem) { it.Queue = "" }},
		{"queue", func(it *claim.NewItem) { it.Queue = strings.Repeat("q", MaxNameLen+1) }},
		{"queue", func(it *claim.NewItem) { it.Queue = "a\x00b" }},
		{"key", func(it *claim.NewItem) { it.Key = "\xff" }},
		{"delay", func(it *claim.NewItem) { it.Delay = -time.Second }},
		{"max_attempts", func(it *claim.NewItem) { it.MaxAttempts = 0 }},
		{"priority", func(it *claim.NewItem) { it.Priority = -1 }},
		{"priority", func(it *claim.NewItem) { it.Priority = claim.MaxPriority + 1 }},
		{"timeout", func(it *claim.NewItem) { it.Timeout = -time.Second }},
	}
	for _, tc := range badItems {
		bad := good
		tc.edit(&bad)
		// The good item before it is not stored either.
		_, err := s.Enqueue(ctx, []claim.NewItem{good, bad})
		requireInvalid(t, err, "items[1]."+tc.field)
	}
	_, err = s.Enqueue(nilCtx, []claim.NewItem{good})
	requireInvalid(t, err, "ctx")

	req := claim.ClaimRequest{Queue: "q", Owner: "w", Limit: 1, Lease: time.Minute}
	badClaims := []struct {
		field string
		edit  func(*claim.ClaimRequest)
	}{
		{"queue", func(r *claim.ClaimRequest) { r.Queue = "" }},
		{"owner", func(r *claim.ClaimRequest) { r.Owner = "" }},
		{"owner", func(r *claim.ClaimRequest) { r.Owner = "\x00" }},
		{"limit", func(r *claim.ClaimRequest) { r.Limit = 0 }},
		{"lease_duration", func(r *claim.ClaimRequest) { r.Lease = 0 }},
	}
	for _, tc := range badClaims {
		bad := req
		tc.edit(&bad)
		_, err := s.Claim(ctx, bad)
		requireInvalid(t, err, tc.field)
	}
	_, err = s.Claim(nilCtx, req)
	requireInvalid(t, err, "ctx")

	_, err = s.Extend(ctx, claim.Ref{}, time.Minute)
	requireInvalid(t, err, "ref")
	_, err = s.Extend(ctx, claim.Ref{Item: c.Item}, time.Minute)
	requireInvalid(t, err, "ref")
	_, err = s.Extend(ctx, c.Ref, 0)
	requireInvalid(t, err, "lease_duration")
	_, err = s.Extend(nilCtx, c.Ref, time.Minute)
	requireInvalid(t, err, "ctx")

	for _, tc := range []struct {
		field string
		st    claim.Settlement
	}{
		{"ref", claim.Settlement{How: claim.SettleComplete}},
		{"how", claim.Settlement{Ref: c.Ref}},
		{"how", claim.Settlement{Ref: c.Ref, How: claim.SettleSnooze + 1}},
		{"after", claim.Settlement{Ref: c.Ref, How: claim.SettleRetry, After: -time.Second}},
		{"reason", claim.Settlement{Ref: c.Ref, How: claim.SettleDead, Reason: "a\x00b"}},
	} {
		requireInvalid(t, s.Settle(ctx, tc.st), tc.field)
	}
	requireInvalid(t, s.Settle(nilCtx, complete(c)), "ctx")

	requireInvalid(t, s.Cancel(ctx, "", its[0].ID), "queue")
	requireInvalid(t, s.Cancel(ctx, "q", 0), "id")
	_, err = s.Lookup(ctx, 0)
	requireInvalid(t, err, "id")
	_, err = s.RequeueDead(ctx, "", its[0].ID)
	requireInvalid(t, err, "queue")
	requireInvalid(t, s.DeleteDead(ctx, "q", 0), "id")
	_, err = s.Counts(ctx, "")
	requireInvalid(t, err, "queue")
	for _, tc := range []struct {
		field string
		q     claim.Query
	}{
		{"queue", claim.Query{Limit: 1}},
		{"limit", claim.Query{Queue: "q"}},
		{"state", claim.Query{Queue: "q", State: claim.Cancelled + 1, Limit: 1}},
	} {
		_, err := s.List(ctx, tc.q)
		requireInvalid(t, err, tc.field)
	}

	after, err := s.List(ctx, claim.Query{Queue: "q", Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, before, after, "bad input changed something")
	require.NoError(t, s.Settle(ctx, complete(c)), "the claim is still live")
}

// TestClaimEnqueueManyNamesTheItem sends a batch whose second item has a
// queue or key only PostgreSQL refuses (the Broker lets them through):
// through Broker.EnqueueMany and Store.Enqueue the error names the item, as
// the Broker's own checks do, through Broker.Enqueue the bare field; and
// nothing is stored, not even the good first item.
func TestClaimEnqueueManyNamesTheItem(t *testing.T) {
	s := newTestClaimStore(t)
	b := lease.Must(claim.New(s))
	defer func() { require.NoError(t, b.Close()) }()
	good := claim.NewItem{Queue: "q", Key: "good", Payload: []byte("good"), MaxAttempts: 1}
	for _, tc := range []struct {
		name, field string
		edit        func(*claim.NewItem)
	}{
		{"NUL in queue", "queue", func(it *claim.NewItem) { it.Queue = "q\x00" }},
		{"invalid UTF-8 queue", "queue", func(it *claim.NewItem) { it.Queue = "q\xff" }},
		{"queue over MaxNameLen", "queue", func(it *claim.NewItem) { it.Queue = strings.Repeat("q", MaxNameLen+1) }},
		{"NUL in key", "key", func(it *claim.NewItem) { it.Key = "k\x00" }},
		{"invalid UTF-8 key", "key", func(it *claim.NewItem) { it.Key = "k\xff" }},
		{"key over MaxNameLen", "key", func(it *claim.NewItem) { it.Key = strings.Repeat("k", MaxNameLen+1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := claim.NewItem{Queue: "q", Payload: []byte("bad"), MaxAttempts: 1}
			tc.edit(&bad)
			_, err := b.EnqueueMany(ctx, []claim.NewItem{good, bad})
			requireInvalid(t, err, "items[1]."+tc.field)
			_, err = s.Enqueue(ctx, []claim.NewItem{good, bad})
			requireInvalid(t, err, "items[1]."+tc.field)
			_, err = b.Enqueue(ctx, bad.Queue, bad.Payload, claim.Key(bad.Key))
			if bad.Key == "" {
				_, err = b.Enqueue(ctx, bad.Queue, bad.Payload)
			}
			requireInvalid(t, err, tc.field)
			assert.Equal(t, claim.Counts{}, counts(t, s, "q"), "nothing was stored")
		})
	}
}

// TestClaimWorkHonoursTheLargestItemTimeout: a timeout above
// claim.MaxTimeout is refused (in whole microseconds it would come back
// negative, and Work would fall back to the Worker's timeout), and one of
// MaxTimeout comes back as given and overrides the Worker's, which would
// have cancelled the handler long before.
func TestClaimWorkHonoursTheLargestItemTimeout(t *testing.T) {
	s := newTestClaimStore(t)
	b := lease.Must(claim.New(s))
	_, err := b.Enqueue(ctx, "q", nil, claim.Timeout(math.MaxInt64))
	requireInvalid(t, err, "timeout")
	it, err := b.Enqueue(ctx, "q", []byte("p"), claim.Timeout(claim.MaxTimeout))
	require.NoError(t, err)
	require.Equal(t, claim.MaxTimeout, lookup(t, s, it.ID).Timeout)

	started, release := make(chan context.Context, 1), make(chan struct{})
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	const workerTimeout = 100 * time.Millisecond
	go func() {
		done <- b.Work(wctx, claim.Worker{Queue: "q", Timeout: workerTimeout, Handler: func(hctx context.Context, c claim.Claim) error {
			started <- hctx
			<-release
			return hctx.Err()
		}})
	}()
	hctx := <-started
	assert.Never(t, func() bool { return hctx.Err() != nil }, 10*workerTimeout, workerTimeout/5,
		"the item's timeout, not the Worker's, bounds the handler")
	close(release)
	stop()
	require.NoError(t, <-done)
	assert.Equal(t, claim.Counts{}, counts(t, s, "q"), "completed")
	require.NoError(t, b.Close())
}

func TestClaimStoreMigrateVersions(t *testing.T) {
	s := newTestClaimStore(t)
	var versions []int
	rows, err := s.pool.Query(ctx, "SELECT version FROM "+s.migrationsTable+" WHERE target = $1 ORDER BY version", s.table)
	require.NoError(t, err)
	versions, err = pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	assert.Equal(t, []int{len(s.claimMigrations())}, versions[len(versions)-1:])
	assert.Len(t, versions, len(s.claimMigrations()))
	// Again: nothing to do, nothing recorded twice.
	require.NoError(t, s.Migrate(ctx))
	var n int
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT count(*) FROM "+s.migrationsTable+" WHERE target = $1", s.table).Scan(&n))
	assert.Equal(t, len(s.claimMigrations()), n)
}

// A claim table dropped by hand is created again by the next Migrate,
// although its versions are recorded.
func TestClaimStoreMigrateAfterDrop(t *testing.T) {
	s := newTestClaimStore(t)
	_, err := s.pool.Exec(ctx, "DROP TABLE "+s.table)
	require.NoError(t, err)
	require.NoError(t, s.Migrate(ctx))
	enqueue(t, s, item("q", "after the drop"))
	assert.Equal(t, claim.Counts{Visible: 1}, counts(t, s, "q"))
}

// TestClaimStoreMigrateConcurrentHostileNames migrates stores on names
// that need quoting from many goroutines at once, some on the same table,
// alongside a LockProvider's Migrate: the one advisory lock serialises them.
func TestClaimStoreMigrateConcurrentHostileNames(t *testing.T) {
	pool := newPool(t, "lease-claims-test")
	suffix := uniqueTable()
	schema := `claims "schema". ` + suffix
	names := []string{`it's "quoted"` + suffix, `with space.and.dots ` + suffix}
	var stores []*ClaimStore
	for _, name := range names {
		for range 3 {
			s, err := NewClaimStore(pool, WithClaimTable(name), WithClaimSchema(schema))
			require.NoError(t, err)
			stores = append(stores, s)
		}
	}
	p, err := NewLockProvider(pool, WithLockTable(uniqueTable()), WithLockSchema(schema))
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, s := range stores {
			require.NoError(t, s.Close())
		}
		_, err := pool.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		require.NoError(t, err)
	})
	var wg sync.WaitGroup
	errs := make([]error, len(stores)+1)
	for i, s := range stores {
		wg.Go(func() { errs[i] = s.Migrate(ctx) })
	}
	wg.Go(func() { errs[len(stores)] = p.Migrate(ctx) })
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	// Each table works, on its own.
	a, b := stores[0], stores[3]
	enqueue(t, a, item("q", "in a"))
	enqueue(t, b, item("q", "in b"))
	got := claimN(t, a, "q", "w", 10)
	assert.Equal(t, []string{"in a"}, payloads(got))
	require.NoError(t, a.Settle(ctx, complete(got[0])))
	// Notifications work whatever the name.
	ready, stop := b.Notify("q")
	<-ready // the listener's start
	stop()
	ready, stop = b.Notify("q")
	defer stop()
	enqueue(t, b, item("q", "again"))
	<-ready
}
