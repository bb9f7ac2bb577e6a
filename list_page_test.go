package lease_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// ListAfter pages through the active leases in ID order, each page what
// List shows from the same point.
func TestListAfterPagesInIDOrder(t *testing.T) {
	s, clk := newService(t)
	for i := range 23 {
		grant(t, s, lease.Operation, time.Duration(i+1)*time.Minute)
	}
	clk.Advance(90 * time.Second) // the first lease expires: pages skip it
	all := mustList(t, s)
	require.Len(t, all, 22)
	var paged []lease.Lease
	var after lease.ID
	for {
		page := mustListAfter(t, s, after, 5)
		if len(page) == 0 {
			break
		}
		assert.LessOrEqual(t, len(page), 5)
		paged = append(paged, page...)
		after = page[len(page)-1].ID
	}
	assert.Equal(t, all, paged)
	assert.Nil(t, mustListAfter(t, s, 0, 0))
	require.NoError(t, s.Close())
	page, err := s.ListAfter(ctx, 0, 5)
	requireCode(t, err, lease.CodeClosed, lease.ErrClosed)
	assert.Nil(t, page)
}
