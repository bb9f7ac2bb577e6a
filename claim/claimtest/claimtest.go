package claimtest

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
	"github.com/leasehold/lease/internal/suite"
	"github.com/leasehold/lease/leasetest"
)

// Durations of the clauses. With a fake clock they are arbitrary; on a real
// clock the short lease (and delay) is what the expiry clauses wait for, the
// long one outlasts any clause, and slack absorbs the skew between the
// test's clock and a remote store's.
const (
	fakeShort  = 10 * time.Second
	realShort  = time.Second
	long       = time.Hour
	realSlack  = 250 * time.Millisecond
	guardLimit = 30 * time.Second
	// wakeLimit bounds, in real time, how long a clause waits for a Notify
	// channel: a store that polls closes it within its poll interval.
	wakeLimit = 10 * time.Second
)

// TestStore runs the claimstore.Store contract against the stores
// newStore returns, one fresh, empty store per clause, each clause a
// subtest: first the clauses every store keeps, then those of each
// optional capability (claimstore.Pauser, claimstore.QueueLister,
// claimstore.Cleaner, claimstore.Retrier, claimstore.TimeBase), which a
// store that lacks the capability skips, saying which interface it does
// not implement. It returns the capabilities it exercised (their clauses
// ran), as "claimstore.Retrier", sorted, and logs them.
//
// newStore also returns the clock the store measures leases and delays
// on; it should register the store's Close with t.Cleanup (the suite
// closes some stores itself, and Close is idempotent). A store that is a
// claimstore.Cleaner keeps finished items for r (the suite asks for
// retention periods between 1 s and 1 h, and 0); other stores ignore r.
// When the clock is a leasetest.Advancer the suite drives time with it
// and checks times exactly; otherwise it waits out leases of a second in
// real time, about 20 s in all. A clause that hangs for 30 s panics with
// every goroutine's stack.
//
// On a real clock, times the store reports are checked against the
// clock's Now, give or take 250 ms: for a store whose clock is remote, the
// clock returned should read the remote one (or the system clock, where
// the two agree that closely).
//
// The suite asks for leases and delays between 1 s and 1 h, which the
// store must accept. Bad input must name the field in a *lease.Error; the
// suite requires a Field but not its spelling. The zero Ref is bad input,
// not a stale claim.
func TestStore(t *testing.T, newStore func(t *testing.T, r claim.Retention) (claim.Store, lease.Clock)) []string {
	t.Helper()
	var rep suite.Report
	run := func(name string, r claim.Retention, body func(e *env)) {
		t.Run(name, func(t *testing.T) {
			s, clock := newStore(t, r)
			if s == nil || clock == nil {
				t.Fatal("claimtest: newStore returned a nil store or clock")
			}
			e := &env{T: t, s: s, clock: clock, ctx: context.Background(), rep: &rep}
			e.adv, _ = clock.(leasetest.Advancer)
			defer suite.Guard("claimtest", name, guardLimit)()
			body(e)
		})
	}
	for _, c := range clauses {
		run(c.name, claim.Retention{}, c.run)
	}
	for _, c := range queueClauses {
		run(c.name, claim.Retention{}, func(e *env) { c.run(e, e.queueStore()) })
	}
	for _, c := range retentionClauses {
		run(c.name, c.retention, needs(c.run))
	}
	for _, c := range capabilityClauses {
		run(c.name, claim.Retention{}, c.run)
	}
	rep.Log(t, "claimtest")
	return rep.Names()
}

// needs makes a clause of one that needs the capability C, an optional
// interface such as claimstore.Retrier: a store without it skips the
// clause, saying which interface it lacks.
func needs[C any](run func(e *env, c C)) func(*env) {
	return func(e *env) {
		c := suite.Probe[C](e, "claimtest", "store", e.s)
		e.rep.Ran(suite.Name[C]())
		run(e, c)
	}
}

// queueStore is the store as a claimstore.Pauser and
// claimstore.QueueLister, or skips the clause naming the one it is not.
func (e *env) queueStore() queueStore {
	e.Helper()
	suite.Probe[claimstore.Pauser](e, "claimtest", "store", e.s)
	suite.Probe[claimstore.QueueLister](e, "claimtest", "store", e.s)
	e.rep.Ran(suite.Name[claimstore.Pauser]())
	e.rep.Ran(suite.Name[claimstore.QueueLister]())
	return e.s.(queueStore)
}

type clause struct {
	name string
	run  func(e *env)
}

// clauses are the contract, one entry per rule; see the claim.Store
// documentation.
var clauses = []clause{
	{"BadInput", testBadInput},
	{"EnqueueVisible", testEnqueueVisible},
	{"TimeoutRange", testTimeoutRange},
	{"Delay", testDelay},
	{"ClaimLimit", testClaimLimit},
	{"ClaimOrder", testClaimOrder},
	{"QueuesApart", testQueuesApart},
	{"LeaseAndExtend", testLeaseAndExtend},
	{"ExpiredClaimReclaimable", testExpiredReclaimable},
	{"StaleAfterReclaim", testStaleAfterReclaim},
	{"CompleteOnce", testCompleteOnce},
	{"RetryAfterDelay", testRetryAfterDelay},
	{"DeadAfterLastAttempt", testDeadAfterLastAttempt},
	{"SnoozeSpendsNoAttempt", testSnooze},
	{"RequeueDead", testRequeueDead},
	{"DeleteDead", testDeleteDead},
	{"Keys", testKeys},
	{"KeysByState", testKeysByState},
	{"Cancel", testCancel},
	{"ListLookupCounts", testListLookupCounts},
	{"Kinds", testKinds},
	{"TagsAndMetadata", testTags},
	{"NotifyWakes", testNotifyWakes},
	{"ReturnedValuesDoNotAlias", testNoAlias},
	{"Closed", testClosed},
	{"ConcurrentClaimersExactlyOnce", testConcurrentClaimers},
	{"ConcurrentExpiry", testConcurrentExpiry},
	{"Linearizable", testLinearizable},
}
