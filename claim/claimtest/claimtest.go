package claimtest

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/internal/suite"
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

// Advancer is a clock whose time moves only when told, such as
// *leasetest.FakeClock. The suite drives time with it when the clock the
// factory returns implements it, and waits in real time otherwise. The
// suite calls Advance from one goroutine at a time, sometimes while other
// goroutines call the store. Only the suite may move the clock, and the
// store's time must be the clock's Now.
type Advancer interface {
	Advance(d time.Duration)
}

// TestStore runs the claim.Store contract against the stores newStore
// returns, one fresh, empty store per clause, each clause a subtest.
// newStore also returns the clock the store measures leases and delays on;
// it should register the store's Close with t.Cleanup (the suite closes
// some stores itself, and Close is idempotent). When the clock is an
// Advancer the suite drives time with it and checks times exactly;
// otherwise it waits out leases of a second in real time, about 20 s in
// all. A clause that hangs for 30 s panics with every goroutine's stack.
//
// On a real clock, times the store reports are checked against the
// clock's Now, give or take 250 ms: for a store whose clock is remote, the
// clock returned should read the remote one (or the system clock, where
// the two agree that closely).
//
// The suite asks for leases and delays between 1 s and 1 h, which the
// store must accept. It uses the Store interface only. Bad input must name
// the field in a *lease.Error; the suite requires a Field but not its
// spelling. The zero Ref is bad input, not a stale claim.
func TestStore(t *testing.T, newStore func(t *testing.T) (claim.Store, lease.Clock)) {
	t.Helper()
	for _, c := range clauses {
		t.Run(c.name, func(t *testing.T) {
			s, clock := newStore(t)
			if s == nil || clock == nil {
				t.Fatal("claimtest: newStore returned a nil store or clock")
			}
			e := &env{T: t, s: s, clock: clock, ctx: context.Background()}
			e.adv, _ = clock.(Advancer)
			defer suite.Guard("claimtest", c.name, guardLimit)()
			c.run(e)
		})
	}
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
	{"RetryNow", testRetryNow},
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
