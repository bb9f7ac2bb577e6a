package claimtest

import (
	"errors"
	"math"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// testTimeoutRange: an item's Timeout up to claim.MaxTimeout comes back as
// given from Enqueue, Lookup, List and Claim, never wrapped around to a
// negative one; a larger one is bad input naming the field, and nothing
// of its batch is stored.
func testTimeoutRange(e *env) {
	q := queue(0)
	n := newItem(q, "largest")
	n.Timeout = claim.MaxTimeout
	it := e.enqueueOne(n)
	assert.Equal(e, claim.MaxTimeout, it.Timeout, "Enqueue: Timeout")
	assert.Equal(e, claim.MaxTimeout, e.lookup(it.ID).Timeout, "Lookup: Timeout")
	listed := e.list(claim.Query{Queue: q, Limit: 10})
	if assert.Len(e, listed, 1, "List") {
		assert.Equal(e, claim.MaxTimeout, listed[0].Timeout, "List: Timeout")
	}
	assert.Equal(e, claim.MaxTimeout, e.claimOne(q, "a", long).Timeout, "Claim: Timeout")

	for _, d := range []time.Duration{claim.MaxTimeout + 1, math.MaxInt64} {
		bad := newItem(q, "too long")
		bad.Timeout = d
		_, err := e.s.Enqueue(e.ctx, []claim.NewItem{newItem(q, "valid"), bad})
		if !assert.ErrorIs(e, err, lease.ErrInvalidArgument, "Enqueue with Timeout %v, above MaxTimeout", d) {
			continue
		}
		var le *lease.Error
		if assert.True(e, errors.As(err, &le), "Timeout %v: the error is a *lease.Error", d) {
			assert.NotEmpty(e, le.Field, "Timeout %v: Field names the bad input", d)
		}
	}
	assert.Equal(e, claim.Counts{Claimed: 1}, e.counts(q), "nothing stored by the refused enqueues")
}
