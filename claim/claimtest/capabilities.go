package claimtest

import (
	"github.com/stretchr/testify/assert"

	"github.com/leasehold/lease/claim/claimstore"
	"github.com/leasehold/lease/internal/suite"
)

// capabilityClauses are the clauses of the optional capabilities that
// need no store of their own: claimstore.Retrier and claimstore.TimeBase.
var capabilityClauses = []clause{
	{"RetryNow", needs(testRetryNow)},
	{"TimeBaseIsTheStoreClock", needs(testTimeBase)},
}

// testTimeBase: the store's Clock is the clock its deadlines are on: it
// reads the time the suite's clock reads, and a claim expires a lease
// after it.
func testTimeBase(e *env, tb claimstore.TimeBase) {
	clock := suite.TimeBase(e, tb, e.clock, e.slack())
	q := queue(0)
	e.enqueueOne(newItem(q, "timed"))
	start := clock.Now()
	c := e.claimOne(q, "a", long)
	end := clock.Now()
	e.near(c.ExpiresAt, start, end, long, "Claim.ExpiresAt on the store's Clock")
	assert.False(e, clock.Now().Before(end), "the store's Clock runs forward")
}
