package replicated

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// grantBurst grants count leases of ttl on n at once, from as many
// goroutines: the batcher puts them in a few entries, so they fall due
// together.
func grantBurst(tb testing.TB, n *Node, count int, ttl time.Duration) map[lease.ID]lease.Lease {
	var (
		mu      sync.Mutex
		granted = make(map[lease.ID]lease.Lease, count)
		wg      sync.WaitGroup
	)
	for range count {
		wg.Go(func() {
			l, err := n.Grant(context.Background(), "burst", lease.Operation, ttl)
			if err != nil {
				tb.Error(err)
				return
			}
			mu.Lock()
			granted[l.ID] = l
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Len(tb, granted, count)
	return granted
}

// collectEnds waits for the endings of every lease in granted and returns
// how late each ended after its expiry, in real time.
func collectEnds(tb testing.TB, e *endings, granted map[lease.ID]lease.Lease) []time.Duration {
	lags := make([]time.Duration, 0, len(granted))
	deadline := time.After(waitLimit)
	for len(lags) < len(granted) {
		select {
		case got := <-e.ch:
			want, ok := granted[got.l.ID]
			require.True(tb, ok)
			require.Equal(tb, lease.EndExpired, got.reason)
			lag := got.at.Sub(want.ExpiresAt)
			require.GreaterOrEqual(tb, lag, time.Duration(0), "lease %d ended early", got.l.ID)
			lags = append(lags, lag)
		case <-deadline:
			tb.Fatalf("%d of %d leases ended", len(lags), len(granted))
		}
	}
	slices.Sort(lags)
	return lags
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

// Leases due together end together, in one tick, on every node.
func TestExpiryBurst(t *testing.T) {
	c := newCluster(t, clusterOpts{raft: patientRaft})
	li := c.leader()
	ends := make([]*endings, len(c.nodes))
	for i, n := range c.nodes {
		ends[i] = watchEnds(n)
		defer ends[i].stop()
	}
	granted := grantBurst(t, c.nodes[li], 5000, 300*time.Millisecond)
	for i, e := range ends {
		lags := collectEnds(t, e, granted)
		t.Logf("node %d: expiry lag p50 %v, p99 %v, max %v", i, percentile(lags, .5), percentile(lags, .99), lags[len(lags)-1])
	}
	list, err := c.nodes[li].List(ctxT(t))
	require.NoError(t, err)
	assert.Empty(t, list)
}
