package lease

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFireBatchCountsKeys checks that one batch of the fire loop does a
// bounded amount of work, counting the keys it deletes: a batch of leases
// with many keys ends fewer leases than one without, so that it holds the
// lock no longer.
func TestFireBatchCountsKeys(t *testing.T) {
	const keysEach = 8
	s := Must(New())
	defer s.Close()
	ctx := context.Background()
	const n = 1000
	for i := range n {
		l, err := s.Grant(ctx, "h", Operation, time.Hour)
		require.NoError(t, err)
		for k := range keysEach {
			require.NoError(t, s.Put(ctx, "k/"+strconv.Itoa(i)+"/"+strconv.Itoa(k), nil, l.ID))
		}
	}
	s.mu.Lock()
	// Settled as of two hours on: every lease is due, and the test runs
	// long before the service's own timer would fire.
	more := s.settleSome(s.now()+int64(2*time.Hour), fireWork)
	left := s.heap.Len()
	s.mu.Unlock()
	require.True(t, more)
	ended := n - left
	require.Positive(t, ended)
	require.LessOrEqual(t, ended*(1+keyWork*keysEach), fireWork+(1+keyWork*keysEach),
		"one batch ended %d leases of %d keys each", ended, keysEach)
}
