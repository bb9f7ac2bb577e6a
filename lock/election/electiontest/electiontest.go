package electiontest

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/suite"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// Durations of the clauses. With a fake clock they are arbitrary; on a real
// clock the short lease is what the expiry clauses wait for, the long one
// outlasts any clause (so a hand-off seen before it ends was not an
// expiry), the poll interval is short so that Observe sees changes
// quickly, and waitLimit bounds, in real time, every wait for an event
// that should come.
const (
	fakeLease  = 10 * time.Second
	fakePoll   = time.Second
	realShort  = time.Second
	realLong   = time.Minute
	realPoll   = 20 * time.Millisecond
	waitLimit  = 10 * time.Second
	guardLimit = 30 * time.Second
)

// TestElection runs the election clauses against the providers
// newProvider returns, one fresh provider per clause, each clause a
// subtest. newProvider also returns the clock the provider's leases expire
// on. The provider must be a lockprovider.Waiter and a lockprovider.Inspector (New refuses
// any other), and must not have a lock-delay: the suite expects an expired
// leader to be replaced at once.
//
// When the clock is a leasetest.Advancer the suite runs on it, exactly and
// without
// waiting; otherwise it uses leases of 1 s where it needs an expiry and
// waits them out, a few seconds in all. A clause that hangs for 30 s panics
// with every goroutine's stack. The suite calls Advance from the clause's
// goroutine while candidates run on others, so the clock must be safe for
// concurrent use.
//
// The election uses the optional capabilities the provider has: it
// follows a lockprovider.HolderWatcher's watch instead of polling in
// Observe, attaches values with a lockprovider.ValueWaiter and counts on a
// lockprovider.TimeBase's clock; the clauses run either way. TestElection
// returns those the provider has, which its clauses therefore exercised
// (sorted, as "lockprovider.HolderWatcher"), and logs them.
func TestElection(t *testing.T, newProvider func(t *testing.T) (lock.Provider, lease.Clock)) []string {
	t.Helper()
	var rep suite.Report
	for _, c := range clauses {
		t.Run(c.name, func(t *testing.T) {
			p, clock := newProvider(t)
			if p == nil || clock == nil {
				t.Fatal("electiontest: newProvider returned a nil provider or clock")
			}
			e := newEnv(t, p, clock)
			used(&rep, p)
			defer suite.Guard("electiontest", c.name, guardLimit)()
			c.run(e)
		})
	}
	rep.Log(t, "electiontest")
	return rep.Names()
}

// used records in rep the optional capabilities of p an Election uses.
func used(rep *suite.Report, p lock.Provider) {
	if _, ok := p.(lockprovider.HolderWatcher); ok {
		rep.Ran(suite.Name[lockprovider.HolderWatcher]())
	}
	if _, ok := p.(lockprovider.ValueWaiter); ok {
		rep.Ran(suite.Name[lockprovider.ValueWaiter]())
	}
	if _, ok := p.(lockprovider.TimeBase); ok {
		rep.Ran(suite.Name[lockprovider.TimeBase]())
	}
}

type clause struct {
	name string
	run  func(e *env)
}

// clauses are the behaviour checked, one entry per promise.
var clauses = []clause{
	{"BadConfiguration", testBadConfiguration},
	{"CampaignBlocksWhileAnotherLeads", testCampaignBlocks},
	{"ResignHandsOverAtOnce", testResignHandsOver},
	{"LeaderReportsValue", testLeaderReportsValue},
	{"ObserveSeesEachChangeInOrder", testObserveInOrder},
	{"ObserveCoalesces", testObserveCoalesces},
	{"ExpiredLeaseLosesLeadership", testExpiredLease},
	{"OneLeaderUnderContention", testOneLeader},
	{"FailingRenewalsStopLeading", testFailingRenewals},
	{"ReleaseOnCancel", testReleaseOnCancel},
	{"FollowersHearOfNewLeaders", testFollowersHear},
}

// background is the context of the clauses' calls.
var background = context.Background()
