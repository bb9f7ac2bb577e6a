package locktest

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/suite"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

// Durations of the clauses. With a fake clock they are arbitrary; on a real
// clock the short lease is what the expiry clauses wait for, the long one
// outlasts any clause, and slack absorbs the skew between the test's clock
// and a remote provider's.
const (
	fakeLease  = 10 * time.Second
	realShort  = time.Second
	realLong   = time.Minute
	realSlack  = 250 * time.Millisecond
	guardLimit = 30 * time.Second
)

// TestProvider runs the lock contract against the providers newProvider
// returns, one fresh provider per clause, each clause a subtest. newProvider
// also returns the clock the provider's leases expire on. When the clock is
// a leasetest.Advancer the suite drives time with it and runs exactly and quickly
// (10,000 acquisitions for token order); otherwise it uses leases of 1s,
// waits them out in real time and scales the counts down, about 15 s in all.
//
// The provider must not have a lock-delay: the suite takes expired locks
// over at once. A clause that hangs for 30 s panics with every goroutine's
// stack.
//
// The clauses of an optional capability run when the provider implements it
// and skip, saying which interface is absent, when it does not: the Wait
// clauses need a lockprovider.Waiter (hand-off on release and on expiry, a
// context that ends while waiting), the Inspect clauses a
// lockprovider.Inspector (Holder and Held, with the holder's value when the
// provider is also a lockprovider.ValueAcquirer), the Value clauses a
// lockprovider.ValueAcquirer or lockprovider.ValueWaiter (values kept and
// bounded by MaxValueSize), the Waiting clauses a
// lockprovider.WaitInspector, the TimeBase clause a lockprovider.TimeBase
// (its Clock is the one leases expire on) and the Watch clause a
// lockprovider.HolderWatcher (each new holder reported, the watch ended by
// its context). TestProvider returns the capabilities it exercised (their
// clauses ran), as "lockprovider.Waiter", sorted, and logs them.
//
// The order in which a provider's waiters get a lock
// (FIFO for lock.Memory) is the provider's own promise, for its own tests:
// the suite cannot tell when a waiter has started waiting, so it cannot
// check the order without racing.
func TestProvider(t *testing.T, newProvider func(t *testing.T) (lock.Provider, lease.Clock)) []string {
	t.Helper()
	var rep suite.Report
	for _, c := range clauses {
		t.Run(c.name, func(t *testing.T) {
			p, clock := newProvider(t)
			if p == nil || clock == nil {
				t.Fatal("locktest: newProvider returned a nil provider or clock")
			}
			e := &env{T: t, p: p, clock: clock, ctx: context.Background(), rep: &rep}
			e.adv, _ = clock.(leasetest.Advancer)
			e.d = realLong
			if e.adv != nil {
				e.d = fakeLease
			}
			defer suite.Guard("locktest", c.name, guardLimit)()
			c.run(e)
		})
	}
	rep.Log(t, "locktest")
	return rep.Names()
}

type clause struct {
	name string
	run  func(e *env)
}

// clauses are the contract, one entry per rule; see the Provider
// documentation.
var clauses = []clause{
	{"BadInput", testBadInput},
	{"AcquireUnheld", testAcquireUnheld},
	{"Contention", testContention},
	{"ContextCancelled", testContextCancelled},
	{"TakeOverAfterExpiry", testTakeOverAfterExpiry},
	{"RenewExtendsAndKeepsToken", testRenewExtends},
	{"RenewSkipsExpired", testRenewSkipsExpired},
	{"RenewPartialInInputOrder", testRenewPartial},
	{"ReleaseFrees", testReleaseFrees},
	{"ReleaseIdempotent", testReleaseIdempotent},
	{"StaleReleaseKeepsNewHolder", testStaleRelease},
	{"StaleReleaseSameExecution", testStaleReleaseSameExecution},
	{"TokensIncrease", testTokensIncrease},
	{"ConcurrentAcquirers", testConcurrentAcquirers},
	{"ReleaseRacesRenew", testReleaseRacesRenew},
	{"Linearizable", testLinearizable},
	// Optional capabilities: a provider without one skips its clauses.
	{"WaitBadInput", needs(testWaitBadInput)},
	{"WaitHandOffOnRelease", needs(testWaitHandOffOnRelease)},
	{"WaitHandOffOnExpiry", needs(testWaitHandOffOnExpiry)},
	{"WaitContextCancelled", needs(testWaitContextCancelled)},
	{"InspectHolder", needs(testInspectHolder)},
	{"InspectHeld", needs(testInspectHeld)},
	{"ValueBadInput", needs(testValueBadInput)},
	{"ValueWaitHandOff", needs(testValueWaitHandOff)},
	{"WaitingListsWaiters", needs(testWaitingLists)},
	{"WaitingBadInput", needs(testWaitingBadInput)},
	{"TimeBaseIsTheLeaseClock", needs(testTimeBase)},
	{"WatchHolderFollows", needs(testWatchHolder)},
}

// needs makes a clause of one that needs the capability C, an optional
// interface such as lockprovider.Waiter: a provider without it skips the clause,
// saying which interface it lacks.
func needs[C any](run func(e *env, c C)) func(*env) {
	return func(e *env) {
		c := suite.Probe[C](e, "locktest", "provider", e.p)
		e.rep.Ran(suite.Name[C]())
		run(e, c)
	}
}
