package replicated

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// Closing a node ends its keep-alives with LS_CLOSED, and nothing of them
// runs after Close returns; the lease is left to expire on the cluster.
func TestKeepAliveEndsOnClose(t *testing.T) {
	c := newCluster(t, clusterOpts{transport: tcpTransport, raft: patientRaft})
	ctx := ctxT(t)
	li := c.leader()
	fi := (li + 1) % 3
	l, err := c.nodes[fi].Grant(ctx, "h", lease.Operation, 10*time.Second)
	require.NoError(t, err)
	kctx, err := c.nodes[fi].KeepAlive(ctx, l.ID)
	require.NoError(t, err)
	c.stop(fi)
	select {
	case <-kctx.Done():
	default:
		t.Fatal("the keep-alive outlived Close")
	}
	require.ErrorIs(t, context.Cause(kctx), lease.ErrClosed)
	_, err = c.nodes[li].Info(ctx, l.ID)
	require.NoError(t, err, "the lease itself lives on until it expires")
}
