package replicated

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/captable"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election/electiontest"
	"github.com/leasehold/lease/lock/lockprovider"
	"github.com/leasehold/lease/lock/locktest"
)

// spreadLocks is one lock provider whose calls go to the providers of
// every node of a cluster in turn, leader and followers alike: an
// acquisition on one node, its renewal on the next, its release on a
// third, and a waiter woken by a release made through another node.
type spreadLocks struct {
	ps   []*LockProvider
	next atomic.Uint64
}

var (
	_ lock.Provider              = (*spreadLocks)(nil)
	_ lockprovider.ValueAcquirer = (*spreadLocks)(nil)
	_ lockprovider.ValueWaiter   = (*spreadLocks)(nil)
	_ lockprovider.Inspector     = (*spreadLocks)(nil)
)

func (s *spreadLocks) pick() *LockProvider {
	return s.ps[(s.next.Add(1)-1)%uint64(len(s.ps))]
}

func (s *spreadLocks) Acquire(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	return s.pick().Acquire(ctx, name, executionID, d)
}

func (s *spreadLocks) AcquireValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	return s.pick().AcquireValue(ctx, name, executionID, d, value)
}

func (s *spreadLocks) AcquireWait(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	return s.pick().AcquireWait(ctx, name, executionID, d)
}

func (s *spreadLocks) AcquireWaitValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	return s.pick().AcquireWaitValue(ctx, name, executionID, d, value)
}

func (s *spreadLocks) Renew(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
	return s.pick().Renew(ctx, leases, d)
}

func (s *spreadLocks) Release(ctx context.Context, leases []lock.Lease) error {
	return s.pick().Release(ctx, leases)
}

func (s *spreadLocks) Holder(ctx context.Context, name string) (lock.Holding, bool, error) {
	return s.pick().Holder(ctx, name)
}

func (s *spreadLocks) Held(ctx context.Context, prefix string, limit int) ([]lock.Holding, error) {
	return s.pick().Held(ctx, prefix, limit)
}

// lockCluster is a TCP cluster with mutual TLS, patient raft timeouts and
// in-memory log stores, ready to serve.
func lockCluster(t *testing.T, size int) *cluster {
	c := newCluster(t, clusterOpts{size: size, transport: tcpTransport, raft: patientRaft})
	c.leader()
	for _, n := range c.nodes {
		require.NoError(t, n.Ready(ctxT(t)))
	}
	return c
}

// spreadFactory returns a suite's factory: each clause gets providers with
// a prefix of its own on every node of c, called in turn.
func spreadFactory(c *cluster) func(t *testing.T) (lock.Provider, lease.Clock) {
	var clause atomic.Int64
	return func(t *testing.T) (lock.Provider, lease.Clock) {
		prefix := "suite/" + strconv.FormatInt(clause.Add(1), 10) + "/"
		s := &spreadLocks{}
		for _, n := range c.nodes {
			p, err := NewLockProvider(n, WithLockPrefix(prefix))
			require.NoError(t, err)
			s.ps = append(s.ps, p)
		}
		return s, lease.SystemClock()
	}
}

// The lock contract holds on a three-node cluster with every call going to
// another node than the last, and on a single node. Leases expire on the
// leader's clock, the system's here, so the suite runs its real-time
// variants.
func TestLockProviderConformance(t *testing.T) {
	for _, size := range []int{3, 1} {
		t.Run(strconv.Itoa(size)+"-node", func(t *testing.T) {
			exercised := locktest.TestProvider(t, spreadFactory(lockCluster(t, size)))
			captable.CheckLockProvider(t, "replicated.LockProvider", (*LockProvider)(nil), exercised)
		})
	}
}

// One provider on a three-node cluster, every call through one node (a
// follower's, when there is one), keeps the contract and its every
// capability: its waiters are this handle's, which Waiting lists.
func TestLockProviderConformanceOneHandle(t *testing.T) {
	c := lockCluster(t, 3)
	node := c.nodes[c.followers(c.leader())[0]]
	var clause atomic.Int64
	exercised := locktest.TestProvider(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		prefix := "one/" + strconv.FormatInt(clause.Add(1), 10) + "/"
		p, err := NewLockProvider(node, WithLockPrefix(prefix))
		require.NoError(t, err)
		return p, lease.SystemClock()
	})
	captable.CheckLockProvider(t, "replicated.LockProvider", (*LockProvider)(nil), exercised)
}

// Leader election over the provider keeps its promises on a three-node
// cluster, the candidates' calls spread over the nodes, and on one node.
func TestLockProviderElection(t *testing.T) {
	for _, size := range []int{3, 1} {
		t.Run(strconv.Itoa(size)+"-node", func(t *testing.T) {
			electiontest.TestElection(t, spreadFactory(lockCluster(t, size)))
		})
	}
}
